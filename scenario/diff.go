package scenario

import (
	"fmt"
	"sort"
	"strconv"
)

// maxDiffLines bounds the lines Diff returns.
const maxDiffLines = 12

// Diff lists where got departs from want under Match's rules, one line per
// difference, each naming its path from the top: `.tools[2].status: want
// "ok", got "refused"` (list positions count from 1, as in Lua). Keys got
// has and want does not list are no difference (maps match as a subset).
// It returns nil when want is not a map or a list, or when the two differ
// as a whole (the mismatch line already says everything).
func Diff(want, got any) []string {
	switch want.(type) {
	case map[string]any, []any, []string:
	default:
		return nil
	}
	var out []string
	more := 0
	add := func(path, text string) {
		if len(out) < maxDiffLines {
			out = append(out, path+": "+text)
		} else {
			more++
		}
	}
	diff(want, got, "", add)
	if len(out) == 1 && out[0][0] == ':' { // the top level differs as a whole
		return nil
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("... and %d more", more))
	}
	return out
}

func diff(want, got any, path string, add func(path, text string)) {
	if Match(want, got) {
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			add(path, "want "+Format(want)+", got "+Format(got))
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "." + k
			gv, ok := g[k]
			if !ok {
				add(p, "want "+Format(w[k])+", got nothing")
				continue
			}
			diff(w[k], gv, p, add)
		}
		return
	case []any, []string:
		wl, _ := asList(want)
		gl, ok := asList(got)
		if !ok {
			add(path, "want "+Format(want)+", got "+Format(got))
			return
		}
		if len(wl) != len(gl) {
			add(path, fmt.Sprintf("want %d elements, got %d", len(wl), len(gl)))
		}
		for i := 0; i < len(wl) && i < len(gl); i++ {
			diff(wl[i], gl[i], path+"["+strconv.Itoa(i+1)+"]", add)
		}
		return
	}
	add(path, "want "+Format(want)+", got "+Format(got))
}
