// Package tomlx is the strict-TOML toolkit config and scenario share, on
// top of github.com/BurntSushi/toml: the line of a key, the wording of a
// value's type, and the "did you mean" of an unknown key.
package tomlx

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// errProbe is what the position probe always fails with.
var errProbe = errors.New("position probe")

type probe struct{}

func (*probe) UnmarshalTOML(any) error { return errProbe }

// Line returns the line of the key that holds p, or 0 when it is not
// known. toml keeps one position per key path, so inside an array of
// tables it is the position of the path's last writer.
func Line(md *toml.MetaData, p toml.Primitive) int {
	if reflect.ValueOf(p).IsZero() {
		return 0
	}
	var pe toml.ParseError
	if err := md.PrimitiveDecode(p, &probe{}); errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

// Describe names a TOML value's type for a message, with the value when it
// is a short scalar.
func Describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return "string"
	case int64:
		return "integer " + strconv.FormatInt(v, 10)
	case float64:
		return "float " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case time.Time:
		switch v.Location().String() {
		case "datetime-local":
			return "local datetime"
		case "date-local":
			return "local date"
		case "time-local":
			return "local time"
		}
		return "datetime"
	case []any:
		return "list"
	case []map[string]any:
		return "list of tables"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

// Suggest returns `; did you mean "X"?` for the candidate closest to key,
// or "" when none is close.
func Suggest(key string, candidates []string) string {
	best, bestDist := "", -1
	lk := strings.ToLower(key)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := Distance(lk, lc)
		limit := max(1, min(len(lk), len(lc))/3)
		close := d <= limit ||
			(len(lk) >= 4 && (strings.HasPrefix(lc, lk) || strings.HasPrefix(lk, lc)))
		if close && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + strconv.Quote(best) + "?"
}

// Distance is the edit distance between a and b in bytes, counting an
// insertion, a deletion, a substitution or a swap of two neighbours as one
// edit (gaol is one edit from goal). Keys are short; anything long is far
// from every candidate anyway.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Located formats one problem the way config and scenario errors print it:
// "FILE:LINE:COL: PATH: MSG". Parts that are unknown are left out: line 0
// drops the line and column, col 0 the column, an empty path the path; with
// no file but a line it reads "line LINE: ...".
func Located(file string, line, col int, path, msg string) string {
	var b strings.Builder
	switch {
	case file != "" && line > 0:
		b.WriteString(file)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(line))
	case file != "":
		b.WriteString(file)
	case line > 0:
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(line))
	}
	if line > 0 && col > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(col))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if path != "" {
		b.WriteString(path)
		b.WriteString(": ")
	}
	b.WriteString(msg)
	return b.String()
}
