// Package compare measures internal/jsonscan (and luabind's decoder built
// on it) against github.com/go-json-experiment/json's jsontext Decoder and
// its Unmarshal, and encoding/json, on the workloads attune reads JSON
// for. It is a module of its own so that attune does not depend on
// go-json-experiment:
//
//	cd internal/jsonscan/compare && go test -bench . -count 5
package compare

import (
	"bytes"
	"encoding/json"
	"io"
	"syscall"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/attune-dev/attune/internal/jsonscan"
	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/luabind"
)

// The client's tools/call of BenchmarkToolCall, its params, and an owner
// log's entry of a few members.
var (
	message = []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/tmp/BenchmarkToolCall123/001/work/small.txt"},"_meta":{"progressToken":12}}}`)
	params  = []byte(`{"name":"write_file","arguments":{"path":"/w/notes/today.md","content":"a line\nanother line with \"quotes\"\n","mode":420,"tags":["draft","mine"],"options":{"create":true,"overwrite":false}}}`)
	entry   = []byte(`{"rev":12,"action":{"type":"add","by":2,"path":"/w/small.txt","tags":["a","b"],"at":1733000000.5,"ok":true}}`)
)

// Same results: each way reads the workloads as encoding/json does.
func TestSameValues(t *testing.T) {
	for _, data := range [][]byte{params, entry, message} {
		var want any
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		got, _, err := jsonscan.Decode(data, jsonscan.Options{Dups: true})
		if err != nil || !jsonEqual(got, want) {
			t.Errorf("jsonscan: %v %v", got, err)
		}
		got, err = jsontextAny(jsontext.NewDecoder(bytes.NewReader(data)))
		if err != nil || !jsonEqual(got, want) {
			t.Errorf("jsontext: %v %v", got, err)
		}
	}
	id, method, p := jsontextMembers(jsontext.NewDecoder(bytes.NewReader(message)))
	if string(id) != "12" || method != "tools/call" || !bytes.HasPrefix(p, []byte(`{"name"`)) {
		t.Errorf("jsontext members: %s %s %s", id, method, p)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// jsontextAny builds the Go value of the next value with the jsontext
// Decoder, token by token (the Decoder refuses duplicate names).
func jsontextAny(d *jsontext.Decoder) (any, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for d.PeekKind() != '}' {
			k, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String()
			v, err := jsontextAny(d)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		_, err := d.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for d.PeekKind() != ']' {
			v, err := jsontextAny(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.ReadToken()
		return a, err
	case '"':
		return tok.String(), nil
	case '0':
		return tok.Float()
	case 't', 'f':
		return tok.Bool(), nil
	}
	return nil, nil
}

// jsontextLua builds Lua values the same way (luabind's workload).
func jsontextLua(L *lua.LState, d *jsontext.Decoder) (lua.LValue, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		t := L.CreateTable(0, 1)
		for d.PeekKind() != '}' {
			k, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String()
			v, err := jsontextLua(L, d)
			if err != nil {
				return nil, err
			}
			t.RawSetString(key, v)
		}
		_, err := d.ReadToken()
		return t, err
	case '[':
		t := L.CreateTable(4, 0)
		for n := 1; d.PeekKind() != ']'; n++ {
			v, err := jsontextLua(L, d)
			if err != nil {
				return nil, err
			}
			t.RawSetInt(n, v)
		}
		_, err := d.ReadToken()
		return t, err
	case '"':
		return lua.LString(tok.String()), nil
	case '0':
		f, err := tok.Float()
		return lua.LNumber(f), err
	case 't':
		return lua.LTrue, nil
	case 'f':
		return lua.LFalse, nil
	}
	return lua.LNil, nil
}

// jsontextMembers reads a message's id (its text), method and params
// (their text), skipping the rest.
func jsontextMembers(d *jsontext.Decoder) (id []byte, method string, params []byte) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, "", nil
	}
	for d.PeekKind() != '}' {
		k, err := d.ReadToken()
		if err != nil {
			return nil, "", nil
		}
		key := k.String()
		v, err := d.ReadValue()
		if err != nil {
			return nil, "", nil
		}
		switch key {
		case "id":
			id = append(id[:0], v...)
		case "method":
			var s string
			_ = jsonv2.Unmarshal(v, &s)
			method = s
		case "params":
			params = append(params[:0], v...)
		}
	}
	return id, method, params
}

var sink any

// loop runs f b.N times and reports the CPU time the process used per
// call (cpu-ns/op), which a loaded machine's other work does not inflate
// as it does ns/op.
func loop(b *testing.B, f func()) {
	b.Helper()
	c0 := cpuNanos()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(cpuNanos()-c0)/float64(b.N), "cpu-ns/op")
}

func cpuNanos() int64 {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return r.Utime.Nano() + r.Stime.Nano()
}

// Params into Go values (attune mcp's tools/call arguments).
func BenchmarkParamsToGo(b *testing.B) {
	b.Run("jsonscan", func(b *testing.B) {
		loop(b, func() {
			v, _, err := jsonscan.Decode(params, jsonscan.Options{Dups: true})
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		})
	})
	b.Run("jsontext-decoder", func(b *testing.B) {
		r := bytes.NewReader(nil)
		d := jsontext.NewDecoder(r)
		loop(b, func() {
			r.Reset(params)
			d.Reset(r)
			v, err := jsontextAny(d)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		})
	})
	b.Run("jsonv2-unmarshal", func(b *testing.B) {
		loop(b, func() {
			var v any
			if err := jsonv2.Unmarshal(params, &v); err != nil {
				b.Fatal(err)
			}
			sink = v
		})
	})
	b.Run("encoding-json", func(b *testing.B) {
		loop(b, func() {
			var v any
			if err := json.Unmarshal(params, &v); err != nil {
				b.Fatal(err)
			}
			sink = v
		})
	})
}

// A message scanned for its id, method and params (attune mcp reads every
// message so).
func BenchmarkMessageMembers(b *testing.B) {
	fields := []string{"jsonrpc", "id", "method", "params", "result", "error"}
	b.Run("jsonscan", func(b *testing.B) {
		var out [6][]byte
		loop(b, func() {
			out = [6][]byte{}
			if ok, err := jsonscan.Members(message, fields, out[:], jsonscan.Options{}); !ok || err != nil {
				b.Fatal(ok, err)
			}
			m, _ := jsonscan.PlainString(out[2])
			sink = m
		})
	})
	b.Run("jsontext-decoder", func(b *testing.B) {
		r := bytes.NewReader(nil)
		d := jsontext.NewDecoder(r)
		loop(b, func() {
			r.Reset(message)
			d.Reset(r)
			_, m, p := jsontextMembers(d)
			if p == nil {
				b.Fatal("no params")
			}
			sink = m
		})
	})
}

// An owner-log entry into Lua values (luabind's JSONDecoder).
func BenchmarkEntryToLua(b *testing.B) {
	st := luabind.NewState(luabind.Options{})
	defer st.Close()
	b.Run("jsonscan-luabind", func(b *testing.B) {
		d := luabind.NewJSONDecoder(st)
		loop(b, func() {
			v, err := d.Decode(entry)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		})
	})
	b.Run("jsontext-decoder", func(b *testing.B) {
		r := bytes.NewReader(nil)
		d := jsontext.NewDecoder(r)
		loop(b, func() {
			r.Reset(entry)
			d.Reset(r)
			v, err := jsontextLua(st.L, d)
			if err != nil && err != io.EOF {
				b.Fatal(err)
			}
			sink = v
		})
	})
}
