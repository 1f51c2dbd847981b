package server

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The tests check every message the server sends against
// docs/protocol.schema.json with this validator of the JSON Schema subset
// the file uses: type, const, enum, properties, required,
// additionalProperties, items, minItems, minLength, minimum, oneOf, anyOf
// and local $ref.

type jsonSchema struct {
	root map[string]any
}

var loadSchema = sync.OnceValues(func() (*jsonSchema, error) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "protocol.schema.json"))
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("docs/protocol.schema.json: %v", err)
	}
	return &jsonSchema{root: root}, nil
})

func protocolSchema(t testing.TB) *jsonSchema {
	t.Helper()
	s, err := loadSchema()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// check validates v against the schema at pointer ("#/$defs/outcome").
func (s *jsonSchema) check(pointer string, v any) error {
	sub, err := s.resolve(pointer)
	if err != nil {
		return err
	}
	return s.validate(sub, v, "$")
}

// has reports whether pointer names a schema.
func (s *jsonSchema) has(pointer string) bool {
	_, err := s.resolve(pointer)
	return err == nil
}

func (s *jsonSchema) resolve(pointer string) (any, error) {
	if !strings.HasPrefix(pointer, "#/") {
		return nil, fmt.Errorf("only local refs: %s", pointer)
	}
	var cur any = s.root
	for _, part := range strings.Split(pointer[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: no %s", pointer, part)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("%s: no %s", pointer, part)
		}
	}
	return cur, nil
}

// ref escapes a method name for a pointer ("round/end" -> "round~1end").
func ref(group, method string) string {
	return "#/$defs/" + group + "/" + strings.ReplaceAll(strings.ReplaceAll(method, "~", "~0"), "/", "~1")
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func typeIs(want string, v any) bool {
	got := typeOf(v)
	return got == want || (want == "number" && got == "integer")
}

func (s *jsonSchema) validate(schema any, v any, path string) error {
	sc, ok := schema.(map[string]any)
	if !ok {
		return fmt.Errorf("schema at %s is not an object", path)
	}
	if r, ok := sc["$ref"].(string); ok {
		sub, err := s.resolve(r)
		if err != nil {
			return err
		}
		if err := s.validate(sub, v, path); err != nil {
			return err
		}
	}
	if t, ok := sc["type"]; ok {
		match := false
		switch x := t.(type) {
		case string:
			match = typeIs(x, v)
		case []any:
			for _, e := range x {
				match = match || typeIs(e.(string), v)
			}
		}
		if !match {
			return fmt.Errorf("%s: want type %v, got %s", path, t, typeOf(v))
		}
	}
	if c, ok := sc["const"]; ok && fmt.Sprint(c) != fmt.Sprint(v) {
		return fmt.Errorf("%s: want %v, got %v", path, c, v)
	}
	if e, ok := sc["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || fmt.Sprint(x) == fmt.Sprint(v)
		}
		if !found {
			return fmt.Errorf("%s: %v is none of %v", path, v, e)
		}
	}
	if str, ok := v.(string); ok {
		if n, ok := sc["minLength"].(float64); ok && float64(len(str)) < n {
			return fmt.Errorf("%s: shorter than %v", path, n)
		}
	}
	if f, ok := v.(float64); ok {
		if n, ok := sc["minimum"].(float64); ok && f < n {
			return fmt.Errorf("%s: %v < %v", path, f, n)
		}
	}
	if m, ok := v.(map[string]any); ok {
		if req, ok := sc["required"].([]any); ok {
			for _, r := range req {
				if _, ok := m[r.(string)]; !ok {
					return fmt.Errorf("%s: %q is required", path, r)
				}
			}
		}
		props, _ := sc["properties"].(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k]; ok {
				if err := s.validate(p, m[k], path+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := sc["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: %q is not allowed here", path, k)
				}
			case map[string]any:
				if err := s.validate(ap, m[k], path+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if l, ok := v.([]any); ok {
		if n, ok := sc["minItems"].(float64); ok && float64(len(l)) < n {
			return fmt.Errorf("%s: fewer than %v items", path, n)
		}
		if it, ok := sc["items"]; ok {
			for k, e := range l {
				if err := s.validate(it, e, fmt.Sprintf("%s[%d]", path, k)); err != nil {
					return err
				}
			}
		}
	}
	if one, ok := sc["oneOf"].([]any); ok {
		n, errs := 0, []string{}
		for _, o := range one {
			if err := s.validate(o, v, path); err == nil {
				n++
			} else {
				errs = append(errs, err.Error())
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of oneOf (%s)", path, n, strings.Join(errs, "; "))
		}
	}
	if any_, ok := sc["anyOf"].([]any); ok {
		errs := []string{}
		for _, o := range any_ {
			if err := s.validate(o, v, path); err == nil {
				errs = nil
				break
			} else {
				errs = append(errs, err.Error())
			}
		}
		if errs != nil {
			return fmt.Errorf("%s: matches none of anyOf (%s)", path, strings.Join(errs, "; "))
		}
	}
	return nil
}

// The schema names every method the server serves, with params and
// results, and the validator refuses what it should.
func TestProtocolSchema(t *testing.T) {
	s := protocolSchema(t)
	for m := range methods() {
		if !s.has(ref("params", m)) || !s.has(ref("results", m)) {
			t.Errorf("docs/protocol.schema.json has no params or results for %s", m)
		}
	}
	for _, c := range []struct {
		ptr string
		v   string
		ok  bool
	}{
		{"#/$defs/outcome", `{"status":"ok","diagnostics":[]}`, true},
		{"#/$defs/outcome", `{"status":"ok","call_id":""}`, false},
		{"#/$defs/outcome", `{"status":"maybe"}`, false},
		{"#/$defs/outcome", `{"status":"ok","extra":1}`, false},
		{"#/$defs/response", `{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{"#/$defs/response", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, false},
		{"#/$defs/response", `{"jsonrpc":"2.0","id":true,"result":{}}`, false},
		{ref("params", "rollback"), `{"instance":"a"}`, false},
		{ref("params", "rollback"), `{"instance":"a","to_turn":1.5}`, false},
		{ref("results", "round/end"), `{"status":"ok","notes":[],"continue":true,"turn":1,"round":1}`, true},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.v), &v); err != nil {
			t.Fatal(err)
		}
		if err := s.check(c.ptr, v); (err == nil) != c.ok {
			t.Errorf("%s %s: %v (want ok=%v)", c.ptr, c.v, err, c.ok)
		}
	}
}
