package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"attune/luabind"
)

// schema maps a field to a type name (SPEC §10): string, number, integer,
// boolean, list, map, any; a trailing "?" makes the field optional. Listed
// fields are required, others are allowed. A nil schema accepts anything.
type schema map[string]string

var schemaTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "list": true, "map": true, "any": true}

func parseSchema(s *luabind.State, v lua.LValue) (schema, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("want a table of field = type, got %s", luabind.TypeName(v))
	}
	sc := schema{}
	var err error
	t.ForEach(func(k, tv lua.LValue) {
		ks, ok1 := k.(lua.LString)
		ts, ok2 := tv.(lua.LString)
		if !ok1 || !ok2 {
			err = fmt.Errorf("want field = \"type\" pairs of strings")
			return
		}
		if !schemaTypes[strings.TrimSuffix(string(ts), "?")] {
			err = fmt.Errorf("field %s: unknown type %q (want string, number, integer, boolean, list, map or any, optionally with ?)", ks, ts)
			return
		}
		sc[string(ks)] = string(ts)
	})
	return sc, err
}

// SchemaError names the path of a violation: input.steps[2]: want string, got number.
type SchemaError struct {
	Path string
	Want string
	Got  string
}

func (e *SchemaError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("%s: %s", e.Path, e.Want)
	}
	return fmt.Sprintf("%s: want %s, got %s", e.Path, e.Want, e.Got)
}

// check validates a value against the schema; root names it ("input").
func (sc schema) check(root string, v any) error {
	if sc == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		if l, isList := v.([]any); isList && len(l) == 0 {
			m = map[string]any{}
		} else if v == nil {
			m = map[string]any{}
		} else {
			return &SchemaError{Path: root, Want: "map", Got: kindOf(v)}
		}
	}
	fields := make([]string, 0, len(sc))
	for f := range sc {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		typ := sc[f]
		optional := strings.HasSuffix(typ, "?")
		typ = strings.TrimSuffix(typ, "?")
		fv, present := m[f]
		if !present || fv == nil {
			if optional {
				continue
			}
			return &SchemaError{Path: root + "." + f, Want: typ, Got: "nothing (the field is required)"}
		}
		if err := checkType(root+"."+f, typ, fv); err != nil {
			return err
		}
	}
	return nil
}

func checkType(path, typ string, v any) error {
	ok := false
	switch typ {
	case "any":
		ok = true
	case "string":
		_, ok = v.(string)
	case "number":
		_, ok = v.(float64)
	case "integer":
		f, isNum := v.(float64)
		ok = isNum && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "boolean":
		_, ok = v.(bool)
	case "list":
		_, ok = v.([]any)
		if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
			ok = true
		}
	case "map":
		_, ok = v.(map[string]any)
		if l, isList := v.([]any); isList && len(l) == 0 {
			ok = true
		}
	}
	if !ok {
		return &SchemaError{Path: path, Want: typ, Got: kindOf(v)}
	}
	return nil
}

// kindOf names a plain value's type.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "number"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", v)
}
