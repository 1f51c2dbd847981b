package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Items slices an array into its items as encoding/json reads it into
// []json.RawMessage, and gives up where that fails.
func TestItems(t *testing.T) {
	for _, c := range []string{`[]`, ` [ ] `, `[1]`, `[ {"a":[1,"]"]} , "x,y" ,null]`, `[[],[[]]]`,
		`[1,]`, `[`, `[1 2]`, `{}`, `null`, ``, `[1]x`, `["\q"]`, `[tru]`} {
		var want []json.RawMessage
		werr := json.Unmarshal([]byte(c), &want)
		got, ok := Items([]byte(c))
		if c == `null` {
			if ok {
				t.Errorf("%q: read as an array", c)
			}
			continue
		}
		if ok != (werr == nil) {
			t.Errorf("%q: ok %v, encoding/json's error %v", c, ok, werr)
			continue
		}
		if !ok {
			continue
		}
		gotRaw := make([]json.RawMessage, len(got))
		for k, g := range got {
			gotRaw[k] = g
		}
		if !reflect.DeepEqual(gotRaw, want) {
			t.Errorf("%q: items %q, encoding/json %q", c, got, want)
		}
	}
}
