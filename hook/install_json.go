package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A hook file is edited in place, at the byte level: attune parses the
// JSON only to find where its own entries are, then splices the file, so
// every value it does not own (numbers too long for a float, key order,
// the layout outside the lists it touches) stays exactly as it was.

// ErrHookFile is the class of a hook file install refuses: not JSON, not
// an object, or a shape attune does not expect. Nothing is changed.
var ErrHookFile = errors.New("hook file refused")

// hookFileError is a refused hook file, with where and what.
type hookFileError struct {
	path, msg string
}

func (e *hookFileError) Error() string {
	return fmt.Sprintf("%s: %s; nothing was changed: fix the file (or move it away) and run the install again", e.path, e.msg)
}

func (e *hookFileError) Unwrap() error { return ErrHookFile }

// jmember is one member of a JSON object: offsets into the document.
type jmember struct {
	key                        string
	keyStart, valStart, valEnd int
}

// jobject is a JSON object found in a document: its braces and members.
type jobject struct {
	open, close int // offsets of '{' and '}'
	members     []jmember
}

func (o jobject) find(key string) (jmember, int) {
	for i, m := range o.members {
		if m.key == key {
			return m, i
		}
	}
	return jmember{}, -1
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanValue returns the end of the (valid) JSON value starting at i.
func scanValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = scanString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
			i++
		}
		return i
	}
}

// scanString returns the offset after the string starting at i.
func scanString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// parseObject reads the members of the (valid) object at b[i] == '{'.
// A key given twice is refused: which one the harness reads is unknown.
func parseObject(b []byte, i int, where string) (jobject, error) {
	o := jobject{open: i}
	seen := map[string]bool{}
	i = skipWS(b, i+1)
	for b[i] != '}' {
		ks := i
		ke := scanString(b, i)
		var key string
		if err := json.Unmarshal(b[ks:ke], &key); err != nil {
			return o, err
		}
		if seen[key] {
			return o, fmt.Errorf("%s has the key %q twice", where, key)
		}
		seen[key] = true
		i = skipWS(b, ke)
		i = skipWS(b, i+1) // ':'
		ve := scanValue(b, i)
		o.members = append(o.members, jmember{key: key, keyStart: ks, valStart: i, valEnd: ve})
		i = skipWS(b, ve)
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	o.close = i
	return o, nil
}

// parseArray returns the elements of the (valid) array raw.
func parseArray(raw []byte) [][]byte {
	var out [][]byte
	i := skipWS(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		e := scanValue(raw, i)
		out = append(out, raw[i:e])
		i = skipWS(raw, e)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return out
}

// kindOf names the JSON kind of a raw value, for messages.
func kindOf(raw []byte) string {
	switch {
	case len(raw) == 0:
		return "empty"
	case raw[0] == '{':
		return "an object"
	case raw[0] == '[':
		return "a list"
	case raw[0] == '"':
		return "a string"
	case string(raw) == "null":
		return "null"
	case string(raw) == "true" || string(raw) == "false":
		return "a boolean"
	default:
		return "a number"
	}
}

// lineCol is the 1-based line and column of offset off in b.
func lineCol(b []byte, off int) (int, int) {
	off = min(off, len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// checkDocument refuses a document that is not one JSON object.
func checkDocument(path string, b []byte) error {
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		return &hookFileError{path, "starts with a byte order mark, which JSON does not allow"}
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			l, c := lineCol(b, int(se.Offset))
			return &hookFileError{fmt.Sprintf("%s:%d:%d", path, l, c), "is not JSON (" + se.Error() + ")"}
		}
		return &hookFileError{path, fmt.Sprintf("is not JSON (%v)", err)}
	}
	if s := skipWS(b, 0); b[s] != '{' {
		return &hookFileError{path, "is " + kindOf(bytes.TrimSpace(b)) + ", not a JSON object of settings"}
	}
	return nil
}

// linePrefix is the white space that starts the line holding offset pos,
// when only white space precedes pos on it; else "".
func linePrefix(b []byte, pos int) (string, bool) {
	start := bytes.LastIndexByte(b[:pos], '\n') + 1
	p := b[start:pos]
	if len(bytes.Trim(p, " \t")) != 0 {
		return "", false
	}
	return string(p), true
}

// indentUnit guesses the file's indentation from its first member.
func indentUnit(b []byte, top jobject) string {
	if len(top.members) > 0 {
		if p, ok := linePrefix(b, top.members[0].keyStart); ok && p != "" {
			return p
		}
	}
	return "  "
}

// render lays out a compact JSON value to sit at a line with prefix.
func render(val []byte, prefix, unit string, compact bool) []byte {
	if compact {
		var b bytes.Buffer
		if json.Compact(&b, val) == nil {
			return b.Bytes()
		}
		return val
	}
	var b bytes.Buffer
	if json.Indent(&b, val, prefix, unit) != nil {
		return val
	}
	return b.Bytes()
}

// setMember returns b with the member key of object o replaced by val
// (compact JSON), added at its end when absent, or removed when val is
// nil.
func setMember(b []byte, o jobject, key string, val []byte, unit string) []byte {
	compact := !bytes.Contains(b[o.open:o.close], []byte("\n")) && len(o.members) > 0
	m, i := o.find(key)
	var out bytes.Buffer
	switch {
	case i >= 0 && val != nil:
		prefix, _ := linePrefix(b, m.keyStart)
		out.Write(b[:m.valStart])
		out.Write(render(val, prefix, unit, compact))
		out.Write(b[m.valEnd:])
	case i >= 0: // remove
		switch {
		case len(o.members) == 1:
			out.Write(b[:o.open+1])
			out.Write(b[o.close:])
		case i > 0:
			out.Write(b[:o.members[i-1].valEnd])
			out.Write(b[m.valEnd:])
		default:
			out.Write(b[:m.keyStart])
			out.Write(b[o.members[1].keyStart:])
		}
	case val == nil:
		return b
	case len(o.members) == 0:
		outer, _ := linePrefix(b, o.open)
		prefix := outer + unit
		kb, _ := json.Marshal(key)
		out.Write(b[:o.open+1])
		out.WriteString("\n" + prefix)
		out.Write(kb)
		out.WriteString(": ")
		out.Write(render(val, prefix, unit, false))
		out.WriteString("\n" + outer)
		out.Write(b[o.close:])
	default:
		last := o.members[len(o.members)-1]
		kb, _ := json.Marshal(key)
		out.Write(b[:last.valEnd])
		if compact {
			out.WriteString(",")
			out.Write(kb)
			out.WriteString(":")
			out.Write(render(val, "", "", true))
		} else {
			prefix, ok := linePrefix(b, last.keyStart)
			if !ok {
				prefix = unit
			}
			out.WriteString(",\n" + prefix)
			out.Write(kb)
			out.WriteString(": ")
			out.Write(render(val, prefix, unit, false))
		}
		out.Write(b[last.valEnd:])
	}
	return out.Bytes()
}

// kv is one member of an object attune writes, in order.
type kv struct {
	k string
	v any
}

// compactObject encodes members in order, without HTML escapes (a
// command's && stays &&).
func compactObject(kvs []kv) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encodeJSON(m.k))
		b.WriteByte(':')
		if raw, ok := m.v.(json.RawMessage); ok {
			b.Write(raw)
		} else {
			b.Write(encodeJSON(m.v))
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func joinArray(elems [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(elems, []byte{','})...), ']')
}

// handlerPos is where a handler sits in a hook file: the event, the index
// of its group in the event's list and its index in the group's hooks
// (0 for a harness whose lists hold handlers themselves).
type handlerPos struct {
	event         string
	group, handle int
}

// fileEdit is what editing a hook file did.
type fileEdit struct {
	out     []byte
	changed bool
	events  []string                       // events whose lists gained or lost attune's entry
	removed []handlerPos                   // attune's entries before the edit
	added   []handlerPos                   // attune's entries after it
	moved   map[handlerPos]handlerPos      // the user's handlers whose place changed
	ours    map[handlerPos]json.RawMessage // attune's new handlers, by place
}

// editHookFile removes the dialect's entries from the hook file b and, when
// add is set, adds a new one for each of spec's events.
func (s *harnessSpec) editHookFile(path string, b []byte, add func(ev string) []byte) (fileEdit, error) {
	fe := fileEdit{moved: map[handlerPos]handlerPos{}, ours: map[handlerPos]json.RawMessage{}}
	if len(bytes.TrimSpace(b)) == 0 {
		if add == nil {
			return fileEdit{out: b}, nil
		}
		b = []byte("{}\n")
	}
	if err := checkDocument(path, b); err != nil {
		return fe, err
	}
	top, err := parseObject(b, skipWS(b, 0), "the file")
	if err != nil {
		return fe, &hookFileError{path, err.Error()}
	}
	unit := indentUnit(b, top)
	hm, hi := top.find("hooks")
	if hi >= 0 && b[hm.valStart] != '{' {
		return fe, &hookFileError{path, `"hooks" is ` + kindOf(b[hm.valStart:hm.valEnd]) + ", not an object of events"}
	}
	if hi < 0 {
		if add == nil {
			return fileEdit{out: b}, nil
		}
		b = setMember(b, top, "hooks", []byte("{}"), unit)
		if top, err = parseObject(b, skipWS(b, 0), "the file"); err != nil {
			return fe, &hookFileError{path, err.Error()}
		}
		hm, _ = top.find("hooks")
	}
	hooks, err := parseObject(b, hm.valStart, `"hooks"`)
	if err != nil {
		return fe, &hookFileError{path, err.Error()}
	}
	// the events to edit: those with entries now, then those attune writes
	var events []string
	for _, m := range hooks.members {
		events = append(events, m.key)
	}
	if add != nil {
		for _, ev := range s.events {
			if _, i := hooks.find(ev); i < 0 {
				events = append(events, ev)
			}
		}
	}
	for _, ev := range events {
		hooks, _ = parseObject(b, hm.valStart, `"hooks"`)
		m, i := hooks.find(ev)
		var elems [][]byte
		if i >= 0 {
			raw := b[m.valStart:m.valEnd]
			if raw[0] != '[' {
				if add != nil && slices.Contains(s.events, ev) {
					return fe, &hookFileError{path, fmt.Sprintf(`"hooks.%s" is %s, not a list of hook entries`, ev, kindOf(raw))}
				}
				continue
			}
			elems = parseArray(raw)
		}
		kept, removed, firstRemoved := s.strip(ev, elems, &fe)
		adding := add != nil && slices.Contains(s.events, ev)
		if !removed && !adding {
			continue
		}
		at := len(kept)
		if firstRemoved >= 0 {
			at = firstRemoved
		}
		final := kept
		if adding {
			final = append(slices.Clone(kept[:at]), append([]keptElem{{raw: add(ev), ours: true}}, kept[at:]...)...)
		}
		for gi, e := range final {
			if e.ours {
				p := handlerPos{ev, gi, 0}
				fe.added = append(fe.added, p)
				fe.ours[p] = e.raw
				continue
			}
			for hi, old := range e.handlers {
				if n := (handlerPos{ev, gi, hi}); n != old {
					fe.moved[old] = n
				}
			}
		}
		fe.events = append(fe.events, ev)
		raws := make([][]byte, len(final))
		for j, e := range final {
			raws[j] = e.raw
		}
		var val []byte
		if len(raws) > 0 {
			val = joinArray(raws)
		}
		b = setMember(b, hooks, ev, val, unit)
	}
	if add != nil && s.version {
		top, _ = parseObject(b, skipWS(b, 0), "the file")
		if _, i := top.find("version"); i < 0 {
			b = setMember(b, top, "version", []byte("1"), unit)
		}
	}
	if add == nil { // the hooks attune leaves empty go
		top, _ = parseObject(b, skipWS(b, 0), "the file")
		if hm, i := top.find("hooks"); i >= 0 {
			if h, _ := parseObject(b, hm.valStart, `"hooks"`); len(h.members) == 0 && len(fe.events) > 0 {
				b = setMember(b, top, "hooks", nil, unit)
			}
		}
	}
	fe.out = b
	fe.changed = len(fe.events) > 0
	return fe, nil
}

// keptElem is an element of an event's list after attune's entries left:
// its bytes and the places its handlers had.
type keptElem struct {
	raw      []byte
	ours     bool
	handlers []handlerPos
}

// strip removes the dialect's handlers from an event's list; removed
// reports whether any were, firstRemoved the index (in kept) where the
// first element that was only attune's stood, or -1.
func (s *harnessSpec) strip(ev string, elems [][]byte, fe *fileEdit) (kept []keptElem, removed bool, firstRemoved int) {
	firstRemoved = -1
	drop := func(gi int) {
		removed = true
		if firstRemoved < 0 {
			firstRemoved = len(kept)
		}
		fe.removed = append(fe.removed, handlerPos{ev, gi, 0})
	}
	for gi, e := range elems {
		if s.flat {
			var h any
			if json.Unmarshal(e, &h) == nil && isOurs(h, s.dialect) {
				drop(gi)
				continue
			}
			kept = append(kept, keptElem{raw: e, handlers: []handlerPos{{ev, gi, 0}}})
			continue
		}
		if e[0] != '{' {
			kept = append(kept, keptElem{raw: e})
			continue
		}
		g, err := parseObject(e, 0, "a group")
		if err != nil {
			kept = append(kept, keptElem{raw: e})
			continue
		}
		hm, i := g.find("hooks")
		if i < 0 || e[hm.valStart] != '[' {
			kept = append(kept, keptElem{raw: e})
			continue
		}
		var left [][]byte
		var places []handlerPos
		var gone []handlerPos
		for hi, h := range parseArray(e[hm.valStart:hm.valEnd]) {
			var v any
			if json.Unmarshal(h, &v) == nil && isOurs(v, s.dialect) {
				gone = append(gone, handlerPos{ev, gi, hi})
				continue
			}
			left = append(left, h)
			places = append(places, handlerPos{ev, gi, hi})
		}
		if len(gone) == 0 {
			kept = append(kept, keptElem{raw: e, handlers: places})
			continue
		}
		removed = true
		fe.removed = append(fe.removed, gone...)
		if len(left) == 0 {
			if firstRemoved < 0 {
				firstRemoved = len(kept)
			}
			continue
		}
		ng := append(append(slices.Clone(e[:hm.valStart]), joinArray(left)...), e[hm.valEnd:]...)
		kept = append(kept, keptElem{raw: ng, handlers: places})
	}
	return kept, removed, firstRemoved
}

// readHookFile reads the file at path (following a link to its target),
// with its mode; a missing file reads as empty with mode 0644.
func readHookFile(path string) (real string, data []byte, mode os.FileMode, err error) {
	real = path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r // a link (a dotfiles folder) stays a link: its file is edited
	} else if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
		return path, nil, 0, fmt.Errorf("%s is a link to a file that is not there (%v); fix the link or remove it, then install again", path, err)
	}
	mode = 0o644
	st, err := os.Stat(real)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return real, nil, mode, nil
	case err != nil:
		return real, nil, 0, err
	case !st.Mode().IsRegular():
		return real, nil, 0, fmt.Errorf("%s is not a regular file", real)
	}
	data, err = os.ReadFile(real)
	return real, data, st.Mode().Perm(), err
}

// writeAtomic replaces the file at path with data: a temporary file in the
// same folder, given the mode, then renamed over it, so a reader sees the
// old file or the new one, never a part.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".attune-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
