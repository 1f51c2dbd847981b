package session

import (
	"encoding/json"

	"github.com/attune-dev/attune/internal/jsonscan"
)

// ReadFact decodes the Fact of one stored entry: what json.Unmarshal into
// a Fact gives (the same fields, the same error for bytes that are not an
// entry), without encoding/json on the entries the journal writes. Every
// process that brings a session back reads the facts of the entries past
// its stored state, most of them tool calls whose arguments and results
// are skipped here; encoding/json checked and walked each twice and, in a
// fresh process, first built its field tables for the type. The scanner
// (internal/jsonscan) checks the whole text and slices out the members a
// Fact has; anything it does not take as encoding/json would (a name in
// another case or with escapes, a string with escapes or other than ASCII,
// a number that is no plain integer, a value of another type, text that is
// not JSON) goes to encoding/json, whose result or error counts. Size and
// Data are the caller's.
func ReadFact(data []byte) (Fact, error) {
	var f Fact
	if readFact(data, &f) {
		return f, nil
	}
	f = Fact{}
	err := json.Unmarshal(data, &f)
	return f, err
}

// readFact is ReadFact's own reading: false where encoding/json decides.
func readFact(data []byte, f *Fact) bool {
	fields := [...]string{"t", "round", "status", "continue", "host_continue", "call_id", "key", "id", "gen"}
	var out [len(fields)][]byte
	if ok, _ := jsonscan.Members(data, fields[:], out[:], jsonscan.Options{}); !ok {
		return false
	}
	var status string
	ok := jsonscan.IntoString(out[0], &f.Type) && jsonscan.IntoInt(out[1], &f.Round) && jsonscan.IntoString(out[2], &status) &&
		jsonscan.IntoBool(out[3], &f.Continue) && jsonscan.IntoBool(out[4], &f.HostContinue) && jsonscan.IntoString(out[5], &f.CallID) &&
		jsonscan.IntoString(out[6], &f.Key) && jsonscan.IntoString(out[7], &f.ID) && jsonscan.IntoInt(out[8], &f.Gen)
	f.Status = Status(status)
	return ok
}
