package jsonrpc

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"sync"

	"github.com/attune-dev/attune/internal/jsonscan"
)

// An id is kept as the token the peer wrote (compacted), never as a
// number read into an int64 or a float64: 1.5, 0.1, 1e2 and 2^63 are
// answered as written (JSON-RPC 2.0 lets a peer use any number or string).

// Null is the id of an answer to a message whose id could not be read.
var Null = json.RawMessage("null")

// ValidID reports whether raw is a JSON-RPC id: a string, a number or null
// (white space around it allowed).
func ValidID(raw []byte) bool {
	s := jsonscan.Scanner{Data: raw}
	s.WS()
	switch c := s.Peek(); {
	case c == '"':
		if _, _, why := s.String(); why != jsonscan.StrOK {
			return false
		}
	case c == 'n':
		if !s.Literal("null") {
			return false
		}
	case c == '-' || c >= '0' && c <= '9':
		if _, _, ok := s.Number(); !ok {
			return false
		}
	default:
		return false
	}
	s.WS()
	return s.Pos == len(raw)
}

// Compact is raw without white space outside strings (raw itself when it
// is not JSON).
func Compact(raw []byte) json.RawMessage {
	for _, c := range raw {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			var buf bytes.Buffer
			if json.Compact(&buf, raw) != nil {
				return raw
			}
			return buf.Bytes()
		}
	}
	return raw
}

// Key names an id in maps: two tokens of one string ("a" and "\u0061")
// share a key; a number keeps its token, and never shares a string's key.
func Key(id []byte) string {
	if len(id) > 0 && id[0] == '"' {
		sc := jsonscan.Scanner{Data: id}
		if body, plain, why := sc.String(); why == jsonscan.StrOK {
			if plain {
				return "s:" + string(body)
			}
			text, _ := jsonscan.Unquote(body)
			return "s:" + text
		}
	}
	return "n:" + string(id)
}

// Kinds of message FindID names.
const (
	KindRequest = "request" // it has a "method"
	KindAnswer  = "answer"  // it has a "result" or an "error"
)

// idPattern finds "id": N or "id": "S" where the members cannot be read.
var idPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"id"\s*:\s*(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|"(?:[^"\\]|\\.)*")`)
})

// LeadingID reads the top-level members of a JSON object from head, the
// start of a message that cannot be taken whole (not JSON, or over the
// limit), as far as they go: the id, when one comes before head ends or
// goes bad, and the kind of message its members say (KindRequest,
// KindAnswer, or "" when none came). It never takes an "id" nested in
// another member.
func LeadingID(head []byte) (id json.RawMessage, kind string) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				break
			}
			switch k {
			case "method":
				kind = KindRequest
			case "result", "error":
				kind = KindAnswer
			}
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				break // the large value, or the bad part: head ends inside it
			}
			if k == "id" && ValidID(v) && id == nil {
				id = Compact(v)
			}
		}
	}
	return id, kind
}

// FindID is LeadingID, then, when it finds none, the first "id" member
// written anywhere in head, or the last in tail, the end of the message
// (nil: head is all of it): a message usually writes its id first or
// last. Where a wrong id costs little (MCP's relay answers an error under
// it) this finds more. nil: none found.
func FindID(head, tail []byte) (id json.RawMessage, kind string) {
	if id, kind = LeadingID(head); id != nil {
		return id, kind
	}
	for k, b := range [][]byte{head, tail} {
		m := idPattern().FindAllSubmatch(b, -1)
		if len(m) == 0 {
			continue
		}
		at := 0 // the head's first id, the tail's last
		if k == 1 {
			at = len(m) - 1
		}
		if raw := m[at][1]; ValidID(raw) {
			return append(json.RawMessage(nil), raw...), kind
		}
	}
	return nil, kind
}

// IntID is the id n, as this side writes the ids of its own calls.
func IntID(n int64) json.RawMessage { return strconv.AppendInt(nil, n, 10) }
