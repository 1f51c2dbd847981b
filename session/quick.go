package session

import (
	"encoding/json"
	"strconv"
)

// QuickCall is a tool call inside a turn that ran only its host core (no
// guard or hook matched, and the default floor let it through). The
// journal holds three entries for it, as for any call the chain runs: the
// floor's verdict, the core's outcome and the call with its outcome.
type QuickCall struct {
	Path   string
	CallID string
	Status Status
	Error  string // the core's failure ("" when it answered)
	Code   string // the call's error code (Entry.Code)
	Args   any    // plain data
	Result any    // plain data; nil when the core failed
	Gen    int
}

// floorPassedJSON is the verdict of a floor that let a call through.
const floorPassedJSON = `{"reason":"","refused":false}`

// QuickEntries are the three entries AddQuickBehind journals for q.
func QuickEntries(q *QuickCall) []Entry {
	return []Entry{
		{Type: Floor, Path: q.Path, Value: json.RawMessage(floorPassedJSON), Gen: q.Gen},
		{Type: Core, Path: q.Path, Value: q.Result, Error: q.Error, Gen: q.Gen},
		{Type: Tool, Path: q.Path, Value: q.Args, CallID: q.CallID, Status: q.Status, Result: q.Result, Error: q.Error, Code: q.Code, Gen: q.Gen},
	}
}

// AddQuickBehind journals q as AddBehind does its three entries, byte for
// byte (TestQuickCallEncoding), encoding them straight from q: no entry
// is built, the path is encoded once and the result once for both entries
// that hold it. A value that cannot be encoded is reported and nothing is
// added (the error is an *EncodeError, as AddBehind's); the journal goes
// on.
func (j *Journal) AddQuickBehind(q *QuickCall) error {
	j.mu.Lock()
	n := len(j.pend)
	b, ends, err := appendQuick(j.pend, q, &j.seen)
	if err != nil {
		j.pend = j.pend[:n]
		j.mu.Unlock()
		return j.quickError(q, err)
	}
	j.pend = b
	j.ends = append(j.ends, ends[0], ends[1], ends[2])
	if j.track != nil {
		j.facts = append(j.facts,
			j.fact(&Entry{Type: Floor, Gen: q.Gen}, b[n:ends[0]]),
			j.fact(&Entry{Type: Core, Gen: q.Gen}, b[ends[0]:ends[1]]),
			j.fact(&Entry{Type: Tool, Status: q.Status, CallID: q.CallID, Gen: q.Gen}, b[ends[1]:ends[2]]))
	}
	j.behindLocked()
	return nil
}

// quickError is the *EncodeError AddBehind would give for the first of
// q's entries that cannot be encoded (err: appendQuick's).
func (j *Journal) quickError(q *QuickCall, err error) *EncodeError {
	var rc encCache
	for _, e := range QuickEntries(q) {
		if _, eerr := appendEntry(nil, &e, &rc); eerr != nil {
			return encodeError(j.log, &e, eerr)
		}
	}
	return &EncodeError{Log: j.log, Type: Tool, What: err.Error(), Err: err}
}

// appendQuick appends the three entries of q and reports where each ends.
func appendQuick(b []byte, q *QuickCall, rc *encCache) ([]byte, [3]int, error) {
	var ends [3]int
	var err error
	b = append(b, `{"t":"floor","value":`+floorPassedJSON...)
	b = appendTail(b, q, rc)
	ends[0] = len(b)

	b = append(b, `{"t":"core"`...)
	var res0, res1 int // where the result's encoding is in b
	if q.Result != nil {
		b = append(b, `,"value":`...)
		res0 = len(b)
		if b, err = appendValue(b, q.Result, rc); err != nil {
			return nil, ends, err
		}
		res1 = len(b)
	}
	if q.Error != "" {
		b = appendString(append(b, `,"error":`...), q.Error)
	}
	b = appendTail(b, q, rc)
	ends[1] = len(b)

	b = append(b, `{"t":"tool"`...)
	if q.Status != "" {
		b = rc.status.append(b, `,"status":`, string(q.Status))
	}
	if q.Args != nil {
		b = append(b, `,"value":`...)
		if b, err = appendValue(b, q.Args, rc); err != nil {
			return nil, ends, err
		}
	}
	if q.Error != "" {
		b = appendString(append(b, `,"error":`...), q.Error)
	}
	if q.Code != "" {
		b = appendString(append(b, `,"code":`...), q.Code)
	}
	if q.Path != "" {
		b = rc.path.append(b, `,"path":`, q.Path)
	}
	if q.CallID != "" {
		b = appendString(append(b, `,"call_id":`...), q.CallID)
	}
	if q.Result != nil {
		b = append(append(b, `,"result":`...), b[res0:res1]...)
	}
	b = appendGen(b, q.Gen)
	ends[2] = len(b)
	return b, ends, nil
}

// appendTail appends the path and generation fields of q and closes the
// entry: the floor's and the core's last fields.
func appendTail(b []byte, q *QuickCall, rc *encCache) []byte {
	if q.Path != "" {
		b = rc.path.append(b, `,"path":`, q.Path)
	}
	return appendGen(b, q.Gen)
}

// appendGen appends the generation field, if any, and closes the entry.
func appendGen(b []byte, gen int) []byte {
	if gen != 0 {
		b = strconv.AppendInt(append(b, `,"gen":`...), int64(gen), 10)
	}
	return append(b, '}')
}
