package engine

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"

	"github.com/attune-dev/attune/luabind"
)

// schema maps a field to a type (docs/forms.md, Schemas): string, number, integer,
// boolean, list, map, any; a trailing "?" makes the field optional. Listed
// fields are required, others are allowed. A nil schema accepts anything.
//
// Nesting: a field's type may also be a table. A table holding one element,
// {T}, is a list whose every element has type T; a table of field = type
// pairs is a map with those fields. A field name ending in "?" is optional
// (useful when its type is a table: ["steps?"] = {"string"}).
//
//	{title = "string", steps = {"string"}, owner = {name = "string", id = "integer?"}}
type schema map[string]*stype

// stype is one type of a schema.
type stype struct {
	name     string // string, number, integer, boolean, list, map, any
	optional bool
	elem     *stype // list element type, when the list is typed
	fields   schema // map fields, when the map is typed
}

var schemaTypes = map[string]bool{"string": true, "number": true, "integer": true, "boolean": true, "list": true, "map": true, "any": true}

func parseSchema(s *luabind.State, v lua.LValue) (schema, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("want a table of field = type, got %s", luabind.TypeName(v))
	}
	if err := luabind.CheckData(t, "schema"); err != nil {
		return nil, err
	}
	return parseFields(t, 0)
}

const maxSchemaDepth = 16

func parseFields(t *lua.LTable, depth int) (schema, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxSchemaDepth)
	}
	sc := schema{}
	var err error
	t.ForEach(func(k, tv lua.LValue) {
		if err != nil {
			return
		}
		ks, ok := k.(lua.LString)
		if !ok {
			err = fmt.Errorf("want field = type pairs with string field names, got a %s key", luabind.TypeName(k))
			return
		}
		name := string(ks)
		optional := false
		if strings.HasSuffix(name, "?") {
			name, optional = strings.TrimSuffix(name, "?"), true
		}
		var st *stype
		st, err = parseType(tv, depth+1)
		if err != nil {
			err = fmt.Errorf("field %s: %w", name, err)
			return
		}
		if optional {
			c := *st
			c.optional = true
			st = &c
		}
		sc[name] = st
	})
	if err != nil {
		return nil, err
	}
	return sc, nil
}

func parseType(v lua.LValue, depth int) (*stype, error) {
	switch x := v.(type) {
	case lua.LString:
		name := string(x)
		optional := strings.HasSuffix(name, "?")
		name = strings.TrimSuffix(name, "?")
		if !schemaTypes[name] {
			return nil, fmt.Errorf("unknown type %q (want string, number, integer, boolean, list, map or any, optionally with ?, or a table)", string(x))
		}
		return &stype{name: name, optional: optional}, nil
	case *lua.LTable:
		if depth > maxSchemaDepth {
			return nil, fmt.Errorf("nested deeper than %d", maxSchemaDepth)
		}
		n, count := x.Len(), 0
		x.ForEach(func(lua.LValue, lua.LValue) { count++ })
		if n == 1 && count == 1 {
			elem, err := parseType(x.RawGetInt(1), depth+1)
			if err != nil {
				return nil, fmt.Errorf("list element: %w", err)
			}
			return &stype{name: "list", elem: elem}, nil
		}
		if n > 0 {
			return nil, fmt.Errorf("a list type holds exactly one element type, as in {\"string\"}")
		}
		fields, err := parseFields(x, depth+1)
		if err != nil {
			return nil, err
		}
		return &stype{name: "map", fields: fields}, nil
	}
	return nil, fmt.Errorf("want a type name or a table, got %s", luabind.TypeName(v))
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
			return &SchemaError{Path: root, Want: "map", Got: luabind.KindOf(v)}
		}
	}
	return sc.checkFields(root, m)
}

func (sc schema) checkFields(path string, m map[string]any) error {
	fields := make([]string, 0, len(sc))
	for f := range sc {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		typ := sc[f]
		fv, present := m[f]
		if !present || fv == nil {
			if typ.optional {
				continue
			}
			return &SchemaError{Path: path + "." + f, Want: typ.String(), Got: "nothing (the field is required)"}
		}
		if err := typ.check(path+"."+f, fv); err != nil {
			return err
		}
	}
	return nil
}

// String names a type as a schema writes it.
func (t *stype) String() string {
	switch {
	case t.elem != nil:
		return "list of " + t.elem.String()
	case t.fields != nil:
		return "map"
	}
	return t.name
}

func (t *stype) check(path string, v any) error {
	if err := checkType(path, t.name, v); err != nil {
		return err
	}
	switch {
	case t.elem != nil:
		l, _ := v.([]any)
		for k, e := range l {
			p := path + "[" + strconv.Itoa(k+1) + "]"
			if e == nil {
				if t.elem.optional {
					continue
				}
				return &SchemaError{Path: p, Want: t.elem.String(), Got: "nil"}
			}
			if err := t.elem.check(p, e); err != nil {
				return err
			}
		}
	case t.fields != nil:
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		return t.fields.checkFields(path, m)
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
		_, ok = luabind.ToNumber(v)
	case "integer":
		f, isNum := luabind.ToNumber(v)
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
		return &SchemaError{Path: path, Want: typ, Got: luabind.KindOf(v)}
	}
	return nil
}
