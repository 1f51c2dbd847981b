package luabind

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
)

// Values a host hands the engine (tool arguments, method inputs, read
// answers) may be any Go data. Scripts, schemas and the journal see them as
// plain data: nil, bool, float64, string, []any and map[string]any. Any Go
// integer or float type and json.Number become float64 by value; every
// other value (a struct, a typed slice or map) becomes the plain data of
// its JSON form, the same value a replay reads back from the journal.

// CopyPlain returns v as plain data, deep-copied (lists and maps), so no
// step sees another's edits. Nesting deeper than maxPlainDepth (a
// self-referencing map a host built) is left as it is below that depth,
// not copied: the conversion to Lua and the journal refuse it with their
// clear errors, where copying it would never end.
func CopyPlain(v any) any { return copyPlain(v, 0) }

// maxPlainDepth is the nesting CopyPlain copies, the conversion to Lua's
// limit.
const maxPlainDepth = 64

func copyPlain(v any, depth int) any {
	switch x := v.(type) {
	case nil, bool, float64, string:
		return v
	case []any:
		if depth >= maxPlainDepth {
			return v
		}
		c := make([]any, len(x))
		for k, e := range x {
			c[k] = copyPlain(e, depth+1)
		}
		return c
	case map[string]any:
		if depth >= maxPlainDepth {
			return v
		}
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = copyPlain(e, depth+1)
		}
		return c
	}
	if f, ok := ToNumber(v); ok {
		return f
	}
	return viaJSON(v)
}

// Plain returns v as plain data: v itself when it is plain already, else a
// converted copy.
func Plain(v any) any {
	if isPlain(v, 0) {
		return v
	}
	return CopyPlain(v)
}

func isPlain(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, float64, string:
		return true
	case []any:
		for _, e := range x {
			if !isPlain(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !isPlain(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// ToNumber reads any Go number (and json.Number) as a float64.
func ToNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uintptr:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	}
	// named number types (type Count int)
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

// viaJSON is the plain data of v's JSON form; v itself when it has none
// (a func, a channel: the conversion to Lua reports it).
func viaJSON(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var plain any
	if err := json.Unmarshal(data, &plain); err != nil {
		return v
	}
	return plain
}

// KindOf names a plain value's type.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	}
	if _, ok := ToNumber(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
