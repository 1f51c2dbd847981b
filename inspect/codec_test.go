package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

// plainOf is v as encoding/json reads it back: what a script sees of it.
func plainOf(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The timeline's journal reader reads every entry as encoding/json does:
// the entries a real session journals, and entries with escapes,
// whitespace, numbers, nulls, nested values and fields it leaves to
// encoding/json.
func TestDecodeEntryAsEncodingJSON(t *testing.T) {
	st := store.NewMemory()
	recordSession(t, st)
	ctx := context.Background()
	raw, err := st.Read(ctx, "journal/claude/s1/s1/claude/s1", 0, 0)
	if err != nil || len(raw) < 8 {
		t.Fatal(len(raw), err)
	}
	entries := make([]string, 0, len(raw)+16)
	for _, r := range raw {
		entries = append(entries, string(r.Data))
	}
	entries = append(entries,
		`{"t":"floor","value":{"reason":"","refused":false},"path":"fs/read"}`,
		`{"t":"tool","status":"ok","value":{"path":"a\"b\\c\u00e9<x>&","n":[1,2.5,-3e2,true,false,null]},"path":"fs/read","call_id":"c:1","result":"text"}`,
		` { "t" : "core" , "value" : { "b" : 1 , "a" : [ ] } , "path" : "fs/re\u0061d" } `,
		`{"t":"tool","status":"refused","reason":"no \u003c","refused_by":"guard","refused_at":"p.lua:2","turn":3,"round":-1,"gen":2}`,
		`{"t":"turn-begin","turn":1,"input":null,"pin":"abc","engine":"attune-1","revs":{"a@session":2},"harness":{"name":"claude"}}`,
		`{"t":"note","note":{"id":"s:n1","kind":"ambient","text":"hé\u2028"}}`,
		`{"t":"round-end","round":2,"output":"done","continue":true,"host_continue":false}`,
		`{"t":"tool","diagnostics":["a","b"],"status":null,"value":"x\u2029y"}`,
		`{"t":"method","owner":"o","name":"m","rev":7,"auth":true,"value":{"k":"<v>"}}`,
		`{"t":"tool","status":"failed","error":"cancelled","code":"cancelled","guards":[{"at":"a.lua:1","verdict":"invoke","marks":["m"]}]}`,
		`{"t":"consume","id":"s:n1","unknown_field":{"x":[1,2]}}`,
		`{}`,
	)
	dc := newDecoder()
	for _, data := range entries {
		var want session.Entry
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		var got session.Entry
		if err := dc.decode([]byte(data), &got); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if a, b := plainOf(t, got), plainOf(t, want); !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\n got %v\nwant %v", data, a, b)
		}
		// and the JSON it keeps is what encoding/json writes of the value
		for _, v := range []any{got.Input, got.Value, got.Result} {
			if r, ok := v.(json.RawMessage); ok {
				var x any
				json.Unmarshal(r, &x)
				if c, _ := json.Marshal(json.RawMessage(r)); string(c) != string(r) {
					t.Errorf("%s: kept %s, not as encoding/json writes it (%s)", data, r, c)
				}
			}
		}
	}
}

// An entry that is not valid JSON, or whose fields have the wrong type,
// fails as it does with encoding/json.
func TestDecodeEntryRefusesWhatEncodingJSONRefuses(t *testing.T) {
	dc := newDecoder()
	for _, data := range []string{
		`{"t":"tool","value":[1,}`,
		`{"t":"tool","turn":1.5}`,
		`{"t":"tool","turn":"1"}`,
		`{"t":"tool","value":{"a":1}`,
		`{"t":"tool","value":"\x"}`,
		`{"t":"tool","value":01}`,
		`{"t":"tool","value":tru}`,
		`{"t":"tool"} x`,
		`["t"]`,
		``,
	} {
		var want session.Entry
		wantErr := json.Unmarshal([]byte(data), &want)
		var got session.Entry
		err := dc.decode([]byte(data), &got)
		if wantErr == nil || err == nil {
			t.Errorf("%q: error %v, encoding/json's %v", data, err, wantErr)
		}
	}
}

// Events are encoded by hand exactly as encoding/json encodes them, every
// field set or not, with characters it escapes.
func TestEncodeEventAsEncodingJSON(t *testing.T) {
	out := "done <ok>"
	events := []Event{
		{},
		{Seq: 3, Instance: "claude/s1", Kind: KindCall, Turn: 1, Round: 2, CallID: "c:1", ToolUseID: "toolu_1", Path: "fs/<read>", Owner: "o", Name: "n",
			Input: json.RawMessage(`{"a":[1,"x"]}`), Status: "refused", Reason: "no & never", RefusedBy: "guard", RefusedAt: "p.lua:3",
			Error: "é\u2028", Result: map[string]any{"k": "v"}, Diagnostics: []string{"d1", "d2"}, Rev: 9, Revs: map[string]int64{"b": 2, "a": 1},
			Chain: []Step{
				{Step: "ceiling", Verdict: "pass"},
				{Step: "guards", Verdict: "refuse", Reason: "r", At: "p.lua:3", Marks: []string{"m"}, Error: "e", Value: "v", Recorded: true,
					Guards: []GuardVerdict{{At: "p.lua:3", Pattern: "fs/*", Verdict: "invoke", Marks: []string{"m"}}, {At: "q.lua:1", Verdict: "refuse", Reason: "r", Error: "x", Attempt: 2}}},
			},
			Open: true, Note: &Note{ID: "s:n1", Kind: "ambient", Text: "t\n", Program: "p", Phase: "turn/start", State: "consumed", ReachedModel: true, ConsumedAt: "turn 1"},
			Key: "k", Value: []any{1.5, nil}, Kind2: "lib", HostContinue: true, Continue: true, Output: &out, Pin: "pin", Level: "info", Program: "prog", Text: "text"},
		{Kind: KindNote, Note: &Note{}},
		{Kind: KindRoundEnd, Output: new(string), Chain: []Step{}, Diagnostics: []string{}, Revs: map[string]int64{}},
	}
	for k := range events {
		want, err := json.Marshal(&events[k])
		if err != nil {
			t.Fatal(err)
		}
		if got := appendEvent(nil, &events[k]); string(got) != string(want) {
			t.Errorf("event %d:\n got %s\nwant %s", k, got, want)
		}
	}
	if !strings.Contains(string(appendEvent(nil, &events[1])), `"guards":[{"at":"p.lua:3","pattern":"fs/*","verdict":"invoke","marks":["m"]}`) {
		t.Errorf("the guards' verdicts are not encoded")
	}
}

// A journal entry that does not decode, or that a newer engine wrote,
// fails Load with the session, the instance and the entry's number; the
// reading ends (no reader is left waiting).
func TestLoadRefusesABadJournal(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		calls       int
		entry, want string
		is          error
	}{
		{0, `{"t":"tool","value":[1,}`, "entry 3", nil},
		{0, `{"t":"telepathy"}`, "entry 3", engine.ErrNewerJournal},
		{10_000, `{"t":"tool","turn":"x"}`, "entry 30023", nil}, // in the fourth chunk read
	} {
		st := bigSession(t, c.calls)
		log := session.LogName("big/s1", "big")
		n, err := st.Length(ctx, log)
		if err != nil || n != int64(3*c.calls+2*(c.calls/1000)+2) { // a turn's start and end, its rounds', 3 entries a call
			t.Fatalf("journal of %d entries: %v", n, err)
		}
		if _, err := st.Append(ctx, log, store.Any, [][]byte{[]byte(c.entry)}, nil); err != nil {
			t.Fatal(err)
		}
		_, err = Load(ctx, st, "big")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "instance big") || c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v", c.entry, err)
		}
	}
}
