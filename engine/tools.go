package engine

import "sort"

// ToolInfo describes one tool an instance can name: a host tool or a
// define/tool of its pin.
type ToolInfo struct {
	Path    string
	Effects []string
	// Defined: a define/tool of the pin (which wins over a host tool of
	// the same path); otherwise a host tool.
	Defined bool
	// Allowed: every effect is inside the bot's ceiling (R4.1); a call of
	// a tool that is not allowed is refused by the ceiling.
	Allowed bool
	// Input and Output are the declared schemas of a defined tool as JSON
	// Schema objects; nil when none was declared.
	Input, Output map[string]any
}

// Tools lists the tools the instance's current pin resolves, sorted by
// path, for a host that shows them to a model (attune mcp's tools/list).
func (i *Instance) Tools() ([]ToolInfo, error) {
	set, err := i.live()
	if err != nil {
		return nil, err
	}
	defer set.release()
	t := set.toolTable()
	out := make([]ToolInfo, 0, len(t.m))
	for _, te := range t.m {
		ti := ToolInfo{Path: te.path, Effects: append([]string(nil), te.effects...), Defined: te.def != nil, Allowed: te.allowed}
		if te.def != nil {
			ti.Input, ti.Output = te.def.input.jsonSchema(), te.def.output.jsonSchema()
		}
		out = append(out, ti)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Path < out[b].Path })
	return out, nil
}

// jsonSchema renders a schema as a JSON Schema object; nil for none.
func (sc schema) jsonSchema() map[string]any {
	if sc == nil {
		return nil
	}
	props := map[string]any{}
	required := []any{}
	names := make([]string, 0, len(sc))
	for name := range sc {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := sc[name]
		props[name] = st.jsonSchema()
		if !st.optional {
			required = append(required, name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func (st *stype) jsonSchema() map[string]any {
	switch st.name {
	case "list":
		out := map[string]any{"type": "array"}
		if st.elem != nil {
			out["items"] = st.elem.jsonSchema()
		}
		return out
	case "map":
		if st.fields != nil {
			return st.fields.jsonSchema()
		}
		return map[string]any{"type": "object"}
	case "any":
		return map[string]any{}
	}
	return map[string]any{"type": st.name} // string, number, integer, boolean
}

// RoundWork reports whether ending the open round and beginning the next
// would do more than count a round: the pin has round guards or hooks, or
// a note waits to be placed. A host that cycles rounds only to place notes
// (attune mcp, after each tool call) skips the boundaries otherwise.
func (i *Instance) RoundWork() bool {
	i.mu.Lock()
	set := i.turnSet
	i.mu.Unlock()
	if set == nil {
		set = i.cur.Load()
	}
	if set == nil {
		return false
	}
	if len(set.guards["round"]) > 0 || len(set.hooks["round/start"]) > 0 || len(set.hooks["round/end"]) > 0 {
		return true
	}
	for _, n := range i.sess.Load().book.Notes() {
		if !n.Placed && !n.Expired {
			return true
		}
	}
	return false
}
