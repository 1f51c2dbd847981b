package session

import (
	"encoding/json"
	"reflect"
	"testing"
)

// factCases are entries as the journal writes them and texts it never
// writes, for ReadFact to read as encoding/json does.
var factCases = []string{
	`{"t":"tool-open","input":{"command":"go test ./...","description":"test"},"key":"toolu_1","value":{"args":{"command":"go test ./..."}},"path":"claude/Bash","call_id":"claude/bench:dn9:1","harness":{"event":{"cwd":"/w"},"name":"claude"},"guards":[{"at":"g.lua:2","pattern":"claude/Bash","verdict":"invoke"}]}`,
	`{"t":"floor","value":{"reason":"","refused":false},"path":"claude/Bash","call_id":"c:1"}`,
	`{"t":"round-end","turn":1,"round":2,"output":"o","continue":true,"host_continue":false,"gen":3}`,
	`{"t":"consume","id":"s:n1","status":"ok"}`,
	`{"t":"turn-begin","turn":3,"input":"hi","status":"ok","pin":"abc","round":-4}`,
	`{}`, ` { "t" : "tool" , "gen" : 0 } `, `{"t":null,"round":null,"continue":null}`,
	// what encoding/json decides: escapes, other cases, other types, duplicates
	`{"t":"tool\u002dopen"}`, `{"T":"tool"}`, `{"Call_ID":"x"}`, `{"t":"ünï"}`, `{"t":"bad \xff"}`,
	`{"t":"a","t":"b"}`, `{"round":1.5}`, `{"round":1e2}`, `{"round":"1"}`, `{"round":99999999999999999999}`,
	`{"continue":1}`, `{"t":1}`, `{"key":["a"]}`, `{"gen":-0}`, `{"\u0074":"x"}`,
	// not an entry at all
	``, `[]`, `null`, `"t"`, `{"t":"tool"`, `{"t":"tool"}x`, `{"t":tool}`, `{"t":"a",}`, `{"round":01}`,
}

// ReadFact gives what json.Unmarshal into a Fact gives, error or not.
func TestReadFactAsEncodingJSON(t *testing.T) {
	for _, c := range factCases {
		checkFact(t, []byte(c))
	}
	for _, c := range factCases[:8] { // what the journal writes: read here, not by encoding/json
		if !readFact([]byte(c), &Fact{}) {
			t.Errorf("%s: left to encoding/json", c)
		}
	}
}

func FuzzReadFact(f *testing.F) {
	for _, c := range factCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFact(t, data) })
}

func checkFact(t *testing.T, data []byte) {
	t.Helper()
	var want Fact
	werr := json.Unmarshal(data, &want)
	got, err := ReadFact(data)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", data, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: read %+v, encoding/json %+v", data, got, want)
	}
}

func BenchmarkReadFact(b *testing.B) {
	data := []byte(factCases[0])
	b.Run("jsonscan", func(b *testing.B) {
		for range b.N {
			if _, err := ReadFact(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for range b.N {
			var f Fact
			if err := json.Unmarshal(data, &f); err != nil {
				b.Fatal(err)
			}
		}
	})
}
