package jsonscan

import "strconv"

// The readers of one member that Members found (raw, nil when the member
// is absent) into a Go field, as encoding/json would decode it: an absent
// or null member leaves the field as it is. Each reports false where
// encoding/json is to decide instead: a value of another type, a string
// with escapes, a number that is no integer or does not fit. A reader of a
// whole object that gets false decodes it again with encoding/json.

// IntoString reads a string member.
func IntoString(raw []byte, dst *string) bool {
	if raw == nil || string(raw) == "null" {
		return true
	}
	s, ok := PlainString(raw)
	if ok {
		*dst = s
	}
	return ok
}

// IntoInt64 reads an integer member written as JSON writes one.
func IntoInt64(raw []byte, dst *int64) bool {
	if raw == nil || string(raw) == "null" {
		return true
	}
	for k, c := range raw { // the scanner checked its grammar
		if (c < '0' || c > '9') && (k > 0 || c != '-') {
			return false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err == nil {
		*dst = n
	}
	return err == nil
}

// IntoInt reads an integer member that fits an int.
func IntoInt(raw []byte, dst *int) bool {
	n := int64(*dst)
	if !IntoInt64(raw, &n) || n != int64(int(n)) {
		return false
	}
	*dst = int(n)
	return true
}

// IntoBool reads a boolean member.
func IntoBool(raw []byte, dst *bool) bool {
	switch string(raw) {
	case "", "null":
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		return false
	}
	return true
}

// IntoAny reads any member as Decode does (null makes it nil, as
// encoding/json does for an interface).
func IntoAny(raw []byte, dst *any) bool {
	if raw == nil {
		return true
	}
	v, _, err := Decode(raw, Options{})
	if err == nil {
		*dst = v
	}
	return err == nil
}
