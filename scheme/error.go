package scheme

// Error is a reader or translator error at a position in a .scm file. Its
// message is "FILE:LINE:COL: message" for the reader and
// "FILE:LINE:COL: FORM: message" for the translator, where FORM names the
// special form that was misused. Use errors.As to get one; it is not changed
// after it is returned.
type Error struct {
	Pos
	Form string // the form being lowered; "" for reader errors
	Msg  string
}

func (e *Error) Error() string {
	if e.Form != "" {
		return e.Pos.String() + ": " + e.Form + ": " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}
