package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

var turnStateCases = []string{
	`{"v":2,"seq":230,"sum":"86b4","turn":1,"round":1,"in_turn":true,"in_round":true,"input":"go","turn_pin":"d48f","book":{"seq":0},"open":[{"t":"tool-open","key":"toolu_1","call_id":"c:1","input":{"command":"go test"}} , {"t":"tool-open","key":"k2","call_id":"c:2","value":[1,"]",{"a":"}"}]}]}`,
	`{"v":2,"seq":3,"sum":"s","turn":2,"gen":4,"activated":true,"fresh":true,"input":{"a":[1,2.5,null,true]},"book":{"seq":3,"placed":[1,2],"live":[{"id":"s:n1","kind":"ambient","text":"t"}]}}`,
	`{"v":2,"seq":1,"open":[]}`, `{"v":2,"seq":1,"open":null,"book":null,"input":null}`, ` {"v" : 2 , "open" : [ {"t":"x"} ] } `,
	`{"v":2,"seq":-1}`, `{"v":2.5}`, `{"seq":1e3}`, `{"V":2}`, `{"sum":"\u0061"}`, `{"sum":"ü"}`, `{"open":[1,"a"]}`, `{"open":{}}`,
	`{"book":{"seq":1,"seq":2}}`, `{"book":{"Seq":1}}`, `{"book":[]}`, `{"in_turn":1}`, `{"v":99999999999999999999}`, `{"v":2,"v":3}`,
	``, `{"v":2,"seq":`, `[]`, `{"open":[{"t":"x"},]}`, `{"input":1e400}`,
}

// readTurnState gives what json.Unmarshal gives, error or not.
func TestReadTurnStateAsEncodingJSON(t *testing.T) {
	for _, c := range turnStateCases {
		checkTurnState(t, []byte(c))
	}
	for _, c := range turnStateCases[:5] { // what attune stores: read here, not by encoding/json
		if !readState([]byte(c), &turnState{}) {
			t.Errorf("%s: left to encoding/json", c)
		}
	}
}

func FuzzReadTurnState(f *testing.F) {
	for _, c := range turnStateCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkTurnState(t, data) })
}

func checkTurnState(t *testing.T, data []byte) {
	t.Helper()
	var want, got turnState
	werr := json.Unmarshal(data, &want)
	err := readTurnState(data, &got)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", data, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: read\n%#v\nencoding/json\n%#v", data, got, want)
	}
}
