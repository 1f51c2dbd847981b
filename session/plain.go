package session

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
)

// EncodeError is an entry the journal could not encode, or a value
// Encodable refused: a value in it has no JSON form. Field is the entry's
// field that holds it ("value", "result", "input"; "" for Encodable), Path
// the key path inside that field ("" for the value itself, "score",
// "items[2].x": list items count from 1), What what was found there.
type EncodeError struct {
	Log   string // the journal's log ("" for Encodable)
	Type  string // the entry's type ("" for Encodable)
	Field string
	Path  string
	What  string
	Err   error // encoding/json's error
}

func (e *EncodeError) Error() string {
	at := e.At(e.Field)
	if at == "" {
		at = "the value"
	}
	msg := e.What + " at " + at + " has no JSON form"
	if e.Type != "" {
		msg = fmt.Sprintf("journal %s: entry %q: %s", e.Log, e.Type, msg)
	}
	return msg
}

// Unwrap returns encoding/json's error.
func (e *EncodeError) Unwrap() error { return e.Err }

// At is the key path of the offending value under root: "result.score"
// for root "result" and path "score", root alone for the value itself.
func (e *EncodeError) At(root string) string {
	switch {
	case e.Path == "":
		return root
	case root == "":
		return e.Path
	case e.Path[0] == '[':
		return root + e.Path
	}
	return root + "." + e.Path
}

// encodeError describes why e could not be encoded (err, from the
// encoder): the first of its host-given fields that has no JSON form, and
// where in it.
func encodeError(log string, e *Entry, err error) *EncodeError {
	for _, f := range []struct {
		name string
		v    any
	}{{"input", e.Input}, {"value", e.Value}, {"result", e.Result}} {
		if f.v == nil {
			continue
		}
		if _, ferr := json.Marshal(f.v); ferr != nil {
			path, what := locate(f.v, ferr)
			return &EncodeError{Log: log, Type: e.Type, Field: f.name, Path: path, What: what, Err: ferr}
		}
	}
	return &EncodeError{Log: log, Type: e.Type, What: err.Error(), Err: err}
}

// Encodable reports whether v has a JSON form, as the journal would encode
// it; when not, an *EncodeError says where and what. Plain data (nil,
// strings, booleans, finite numbers, maps of strings and lists of plain
// data) is checked by a walk that allocates nothing, raw JSON by a scan;
// other values are encoded.
func Encodable(v any) error {
	switch x := v.(type) {
	case nil, string, bool:
		return nil
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return nil
		}
	}
	if plainOK(v, 0) {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok && json.Valid(raw) {
		return nil // as the journal takes it
	}
	if _, err := json.Marshal(v); err != nil {
		path, what := locate(v, err)
		return &EncodeError{Path: path, What: what, Err: err}
	}
	return nil
}

// plainOK reports whether v is plain data that appendPlain encodes by
// itself: false for anything else, which encoding/json then decides.
func plainOK(v any, depth int) bool {
	switch x := v.(type) {
	case nil, string, bool:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		return depth < maxPlainDepth && allPlainOK(maps.Values(x), depth+1)
	case []any:
		return depth < maxPlainDepth && allPlainOK(slices.Values(x), depth+1)
	}
	return false
}

// allPlainOK reports whether every value of vs, found depth deep, is plain.
func allPlainOK(vs iter.Seq[any], depth int) bool {
	for v := range vs {
		if !plainOK(v, depth) {
			return false
		}
	}
	return true
}

// maxLocateDepth is how deep locate looks for what encoding/json refused;
// a value it finds nothing wrong with down to there nests deeper (a cycle).
const maxLocateDepth = 100

// locate finds where in v (which encoding/json refused with err) the value
// with no JSON form is, and what it is. It runs only on that failure.
func locate(v any, err error) (path, what string) {
	var l locator
	found := l.walk(reflect.ValueOf(v), 0)
	var te *json.UnsupportedTypeError
	switch {
	case l.deep:
		if len(l.keys) > 4 {
			l.keys = append(l.keys[:4], "...")
		}
		return l.path(), fmt.Sprintf("a cycle (or nesting deeper than %d levels)", maxLocateDepth)
	case found:
		return l.path(), l.what
	case errors.As(err, &te):
		return "", "a value of type " + te.Type.String()
	}
	return "", err.Error()
}

// locator walks a value the way encoding/json does, keeping the key path.
type locator struct {
	keys []string // ".key" or "[n]", outermost first
	what string
	deep bool // the walk stopped at maxLocateDepth
}

func (l *locator) path() string {
	p := ""
	for _, k := range l.keys {
		p += k
	}
	if p != "" && p[0] == '.' {
		p = p[1:]
	}
	return p
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// walk reports whether it found a value with no JSON form in v (l.what
// says what, l.keys where).
func (l *locator) walk(v reflect.Value, depth int) bool {
	if !v.IsValid() {
		return false
	}
	if depth > maxLocateDepth {
		l.deep = true
		return true
	}
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface || !v.IsNil() {
		if v.Type().Implements(marshalerType) {
			if _, err := v.Interface().(json.Marshaler).MarshalJSON(); err != nil {
				l.what = "a value whose MarshalJSON failed (" + err.Error() + ")"
				return true
			}
			return false
		}
		if v.Type().Implements(textMarshalerType) {
			if _, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err != nil {
				l.what = "a value whose MarshalText failed (" + err.Error() + ")"
				return true
			}
			return false
		}
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			l.what = "NaN"
		case math.IsInf(f, 1):
			l.what = "+Inf"
		case math.IsInf(f, -1):
			l.what = "-Inf"
		default:
			return false
		}
		return true
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		l.what = "a value of type " + v.Type().String()
		return true
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		return l.walk(v.Elem(), depth+1)
	case reflect.Map:
		kt := v.Type().Key()
		if kt.Kind() != reflect.String && !kt.Implements(textMarshalerType) && !isIntKind(kt.Kind()) {
			l.what = "a map with keys of type " + kt.String()
			return true
		}
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for k, key := range keys {
			names[k] = fmt.Sprint(key.Interface())
		}
		order := make([]int, len(keys))
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(a, b int) int {
			switch {
			case names[a] < names[b]:
				return -1
			case names[a] > names[b]:
				return 1
			}
			return 0
		})
		for _, k := range order {
			l.keys = append(l.keys, keySegment(names[k]))
			if l.walk(v.MapIndex(keys[k]), depth+1) {
				return true
			}
			l.keys = l.keys[:len(l.keys)-1]
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return false // []byte: base64
		}
		for k := range v.Len() {
			l.keys = append(l.keys, "["+strconv.Itoa(k+1)+"]")
			if l.walk(v.Index(k), depth+1) {
				return true
			}
			l.keys = l.keys[:len(l.keys)-1]
		}
	case reflect.Struct:
		t := v.Type()
		for k := range t.NumField() {
			f := t.Field(k)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name := f.Name
			if tag, ok := f.Tag.Lookup("json"); ok {
				n, _, _ := cutComma(tag)
				if n == "-" && tag == "-" {
					continue
				}
				if n != "" {
					name = n
				}
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				if l.walk(v.Field(k), depth+1) { // its fields are the struct's own
					return true
				}
				continue
			}
			l.keys = append(l.keys, keySegment(name))
			if l.walk(v.Field(k), depth+1) {
				return true
			}
			l.keys = l.keys[:len(l.keys)-1]
		}
	}
	return false
}

func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func cutComma(s string) (before, after string, found bool) {
	for k := range len(s) {
		if s[k] == ',' {
			return s[:k], s[k+1:], true
		}
	}
	return s, "", false
}

// keySegment is ".key" for a key made of letters, digits, _ and -, else
// the key quoted (`."a b"`).
func keySegment(k string) string {
	if k == "" {
		return `.""`
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "." + strconv.Quote(k)
		}
	}
	return "." + k
}
