package harness

import (
	"encoding/json"
	"reflect"
	"testing"
)

// EventFields gives each field the value the JSON decoder gives it,
// whether it takes a plain string's text as it is (no escape, valid
// UTF-8) or decodes it: escapes, non-ASCII text, bytes that are not UTF-8
// (the decoder's U+FFFD), numbers, booleans, objects; the tool's input and
// response are left out.
func TestEventFields(t *testing.T) {
	data := []byte("{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"s-1\",\"cwd\":\"/w/caf\u00e9\"," +
		"\"prompt\":\"say \\\"hi\\\"\\n\\u00e9\\ud83d\\ude00\",\"agent_type\":\"a\xffb\",\"turn_id\":\"\"," +
		"\"stop_hook_active\":true,\"n\":12.5,\"o\":{\"k\":[1,\"x\"]},\"z\":null," +
		"\"tool_input\":{\"command\":\"ls\"},\"tool_response\":\"ok\"}")
	got := EventFields(data)
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	delete(want, "tool_input")
	delete(want, "tool_response")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("EventFields:\n got %#v\nwant %#v", got, want)
	}
	if got["agent_type"] != "a\ufffdb" || got["prompt"] != "say \"hi\"\n\u00e9\U0001F600" {
		t.Fatalf("decoded strings: %q %q", got["agent_type"], got["prompt"])
	}
}
