package session

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// encodeEntry is json.Marshal(e), written by hand for the entries a turn
// writes most (tool calls and core outcomes: a type, a path, a call id and
// a plain value, their status and result); every other entry goes through
// encoding/json. Both decode
// to the same Entry.
func encodeEntry(e *Entry) ([]byte, error) {
	return appendEntry(make([]byte, 0, 48+len(e.Path)+len(e.CallID)+len(e.Error)), e)
}

// appendEntry appends e's encoding to b (a batch shares one buffer).
func appendEntry(b []byte, e *Entry) ([]byte, error) {
	if e.Turn != 0 || e.Round != 0 || e.Input != nil || e.ContextFresh || e.HostContinue ||
		e.Output != nil || e.Continue || e.Key != "" || e.Owner != "" || e.Name != "" || e.Auth ||
		e.Kind != "" || e.Reason != "" || e.RefusedBy != "" || e.Diagnostics != nil ||
		e.Note != nil || e.ID != "" || e.Revs != nil || e.Pin != "" || e.Engine != "" {
		j, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		return append(b, j...), nil
	}
	b = append(b, `{"t":`...)
	b = appendString(b, e.Type)
	if e.Status != "" {
		b = append(b, `,"status":`...)
		b = appendString(b, e.Status)
	}
	var err error
	if e.Value != nil {
		b = append(b, `,"value":`...)
		if b, err = appendValue(b, e.Value); err != nil {
			return nil, err
		}
	}
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, e.Error)
	}
	if e.Path != "" {
		b = append(b, `,"path":`...)
		b = appendString(b, e.Path)
	}
	if e.CallID != "" {
		b = append(b, `,"call_id":`...)
		b = appendString(b, e.CallID)
	}
	if e.Result != nil {
		b = append(b, `,"result":`...)
		if b, err = appendValue(b, e.Result); err != nil {
			return nil, err
		}
	}
	if e.Gen != 0 {
		b = append(b, `,"gen":`...)
		b = strconv.AppendInt(b, int64(e.Gen), 10)
	}
	return append(b, '}'), nil
}

// appendValue appends v as JSON: strings, finite numbers and booleans
// directly, anything else through encoding/json.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case json.RawMessage:
		if json.Valid(x) {
			return append(b, x...), nil
		}
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) && x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.AppendInt(b, int64(x), 10), nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

// appendString appends s as a JSON string. Printable ASCII without quotes
// or backslashes is copied; any other string goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for k := 0; k < len(s); k++ {
		if c := s[k]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, _ := json.Marshal(s) // a string always encodes
			return append(b, data...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
