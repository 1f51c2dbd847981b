package mcpproxy

import (
	"github.com/attune-dev/attune/internal/jsonscan"
)

// A tools/call decodes three JSON texts on its way through the proxy (the
// client's message, its arguments, the upstream's result), and
// encoding/json spent more CPU on them than the tool chain's Lua guard:
// reflection for every value, and every text scanned twice (once to
// validate). internal/jsonscan reads plain JSON into the values
// encoding/json gives an `any` in one pass. It is strict: it accepts only
// texts encoding/json accepts, and gives up on anything it does not handle
// itself (a number float64 cannot hold, a nesting deeper than
// encoding/json's); the callers then decode with encoding/json as before,
// so results and errors are encoding/json's in every case.
// fastjson_test.go fuzzes the two against each other.

// parseAny decodes data as json.Unmarshal into an `any` does; ok is false
// when the caller must ask encoding/json.
func parseAny(data []byte) (v any, ok bool) {
	v, _, err := jsonscan.Decode(data, jsonscan.Options{})
	return v, err == nil
}

// validJSON reports whether data is one JSON value (with whitespace
// around), as json.Valid; false may also mean "ask json.Valid".
func validJSON(data []byte) bool {
	ok, _ := jsonscan.Valid(data, jsonscan.Options{})
	return ok
}

var messageFields = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// fastWire fills w from a message as json.Unmarshal would, for the usual
// messages (no error member, a version, id and method written plainly);
// false: decode it with encoding/json.
func fastWire(data []byte, w *wireMessage) bool {
	var out [6][]byte
	if ok, _ := jsonscan.Members(data, messageFields, out[:], jsonscan.Options{}); !ok || out[5] != nil {
		return false
	}
	var ok bool
	if w.Version, ok = jsonscan.PlainString(out[0]); !ok {
		return false
	}
	if out[1] != nil {
		id, ok := parseAny(out[1])
		switch id.(type) {
		case float64, string, nil:
		default:
			ok = false
		}
		if !ok {
			return false
		}
		w.ID = out[1] // the token as written
	}
	if m := out[2]; m != nil && string(m) != "null" {
		method, ok := jsonscan.PlainString(m)
		if !ok {
			return false
		}
		w.Method = &method
	}
	w.Params, w.Result = out[3], out[4]
	return true
}

var callFields = []string{"name", "arguments", "_meta"}

// fastCallParams decodes the params of tools/call as json.Unmarshal into
// callParams would, and keeps the arguments' text; ok false: decode them
// with encoding/json. faithful reports that the arguments' text says what
// their value says (no byte read as U+FFFD, every number written as
// encoding/json writes its float64): the upstream may be sent that text
// for the value the chain judged. A *jsonscan.DupError: a member named
// twice anywhere in the params, which the caller refuses.
func fastCallParams(data []byte, c *callParams) (rawArgs []byte, faithful, ok bool, err error) {
	var out [3][]byte
	if ok, err := jsonscan.Members(data, callFields, out[:], jsonscan.Options{Dups: true}); !ok || err != nil {
		return nil, false, false, err
	}
	if out[0] != nil && string(out[0]) != "null" {
		if c.Name, ok = jsonscan.PlainString(out[0]); !ok {
			return nil, false, false, nil
		}
	}
	faithful = true
	if out[1] != nil {
		v, res, err := jsonscan.Decode(out[1], jsonscan.Options{Dups: true})
		if err != nil {
			return nil, false, false, nil // Members checked the names: a number float64 cannot hold, say
		}
		c.Arguments, faithful = v, !res.Lossy
	}
	c.Meta = out[2]
	return out[1], faithful, true, nil
}
