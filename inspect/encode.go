package inspect

import (
	"encoding/json"
	"strconv"
)

// The timeline's events are encoded by hand, as encoding/json encodes
// Event (field order, omitempty, escaping; TestEncodeEventAsEncodingJSON
// holds it byte for byte): a long session's events are most of what
// `attune inspect --json` prints, and the host values in them are already
// JSON (json.RawMessage, from the journal) that is copied through.

// appendEvent appends ev as json.Marshal(ev) would.
func appendEvent(b []byte, ev *Event) []byte {
	b = strconv.AppendInt(append(b, `{"seq":`...), int64(ev.Seq), 10)
	b = appendStr(append(b, `,"instance":`...), ev.Instance)
	b = appendStr(append(b, `,"kind":`...), ev.Kind)
	b = appendInt(b, `,"turn":`, int64(ev.Turn))
	b = appendInt(b, `,"round":`, int64(ev.Round))
	b = appendOpt(b, `,"call_id":`, ev.CallID)
	b = appendOpt(b, `,"tool_use_id":`, ev.ToolUseID)
	b = appendOpt(b, `,"path":`, ev.Path)
	b = appendOpt(b, `,"owner":`, ev.Owner)
	b = appendOpt(b, `,"name":`, ev.Name)
	b = appendAnyOpt(b, `,"input":`, ev.Input)
	b = appendOpt(b, `,"status":`, string(ev.Status))
	b = appendOpt(b, `,"reason":`, ev.Reason)
	b = appendOpt(b, `,"refused_by":`, ev.RefusedBy)
	b = appendOpt(b, `,"refused_at":`, ev.RefusedAt)
	b = appendOpt(b, `,"error":`, ev.Error)
	b = appendAnyOpt(b, `,"result":`, ev.Result)
	b = appendStrs(b, `,"diagnostics":`, ev.Diagnostics)
	b = appendInt(b, `,"rev":`, ev.Rev)
	if len(ev.Revs) > 0 {
		b = appendAny(append(b, `,"revs":`...), ev.Revs)
	}
	if len(ev.Chain) > 0 {
		b = append(b, `,"chain":[`...)
		for k := range ev.Chain {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendStep(b, &ev.Chain[k])
		}
		b = append(b, ']')
	}
	if ev.Open {
		b = append(b, `,"open":true`...)
	}
	if n := ev.Note; n != nil {
		b = appendStr(append(b, `,"note":{"id":`...), n.ID)
		b = appendStr(append(b, `,"kind":`...), n.Kind)
		b = appendStr(append(b, `,"text":`...), n.Text)
		b = appendOpt(b, `,"program":`, n.Program)
		b = appendOpt(b, `,"phase":`, n.Phase)
		b = appendStr(append(b, `,"state":`...), n.State)
		b = strconv.AppendBool(append(b, `,"reached_model":`...), n.ReachedModel)
		b = appendOpt(b, `,"consumed_at":`, n.ConsumedAt)
		b = append(b, '}')
	}
	b = appendOpt(b, `,"key":`, ev.Key)
	b = appendAnyOpt(b, `,"value":`, ev.Value)
	b = appendOpt(b, `,"delivery":`, ev.Kind2)
	if ev.HostContinue {
		b = append(b, `,"host_continue":true`...)
	}
	if ev.Continue {
		b = append(b, `,"continue":true`...)
	}
	if ev.Output != nil {
		b = appendStr(append(b, `,"output":`...), *ev.Output)
	}
	b = appendOpt(b, `,"pin":`, ev.Pin)
	b = appendOpt(b, `,"level":`, ev.Level)
	b = appendOpt(b, `,"program":`, ev.Program)
	b = appendOpt(b, `,"text":`, ev.Text)
	return append(b, '}')
}

// appendStep appends a chain step as json.Marshal(st) would.
func appendStep(b []byte, st *Step) []byte {
	b = appendStr(append(b, `{"step":`...), st.Step)
	b = appendStr(append(b, `,"verdict":`...), st.Verdict)
	b = appendOpt(b, `,"reason":`, st.Reason)
	b = appendOpt(b, `,"at":`, st.At)
	b = appendStrs(b, `,"marks":`, st.Marks)
	b = appendOpt(b, `,"error":`, st.Error)
	b = appendAnyOpt(b, `,"value":`, st.Value)
	if len(st.Guards) > 0 {
		b = append(b, `,"guards":[`...)
		for k := range st.Guards {
			if k > 0 {
				b = append(b, ',')
			}
			g := &st.Guards[k]
			b = appendStr(append(b, `{"at":`...), g.At)
			b = appendOpt(b, `,"pattern":`, g.Pattern)
			b = appendStr(append(b, `,"verdict":`...), g.Verdict)
			b = appendOpt(b, `,"reason":`, g.Reason)
			b = appendOpt(b, `,"error":`, g.Error)
			b = appendStrs(b, `,"marks":`, g.Marks)
			b = appendInt(b, `,"attempt":`, int64(g.Attempt))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = strconv.AppendBool(append(b, `,"recorded":`...), st.Recorded)
	return append(b, '}')
}

func appendInt(b []byte, name string, n int64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), n, 10)
}

func appendOpt(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendStr(append(b, name...), s)
}

func appendStrs(b []byte, name string, ss []string) []byte {
	if len(ss) == 0 {
		return b
	}
	b = append(append(b, name...), '[')
	for k, s := range ss {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendStr(b, s)
	}
	return append(b, ']')
}

func appendAnyOpt(b []byte, name string, v any) []byte {
	if v == nil {
		return b
	}
	return appendAny(append(b, name...), v)
}

// appendAny appends a host value: journaled JSON as it is (the journal
// reader made it canonical), a string, else what encoding/json makes of it
// (null when it has no JSON form: the timeline still encodes).
func appendAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case json.RawMessage:
		if len(x) > 0 {
			return append(b, x...)
		}
	case string:
		return appendStr(b, x)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, data...)
}

// appendStr appends s as encoding/json does: printable ASCII other than
// ", \, <, > and & is copied; any other string goes through encoding/json.
func appendStr(b []byte, s string) []byte {
	for k := 0; k < len(s); k++ {
		if c := s[k]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			data, _ := json.Marshal(s) // a string always encodes
			return append(b, data...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
