package lua

// attune: a field of a small table whose value is made when first read.

// LLazy stands in a small table's field for a value made on the field's
// first read: every method that reads the table (RawGetString, RawGet,
// Next, ForEach, and so the VM and pairs) puts Make's result in its place
// first, so no script and no reader ever gets the LLazy itself. attune
// puts a call's converted argument in its call record this way: a handler
// that never reads it costs no conversion. Only PeekAt sees it.
type LLazy struct {
	make_ func(*LLazy) LValue
	// Arg and Aux are Make's to read.
	Arg, Aux any
	value    LValue // made (nil before)
}

// NewLazy returns an LLazy whose value is make(l), made on first read.
func NewLazy(make func(*LLazy) LValue, arg, aux any) *LLazy {
	return &LLazy{make_: make, Arg: arg, Aux: aux}
}

// Reset readies l, whose value was never made, for another field.
func (l *LLazy) Reset(make func(*LLazy) LValue, arg, aux any) {
	*l = LLazy{make_: make, Arg: arg, Aux: aux}
}

// Made is the value made, or nil while the field was never read.
func (l *LLazy) Made() LValue { return l.value }

func (l *LLazy) make() LValue {
	if l.value == nil {
		v := l.make_(l)
		if v == nil {
			v = LNil
		}
		l.value = v
	}
	return l.value
}

func (l *LLazy) String() string   { return "lazy value" }
func (l *LLazy) Type() LValueType { return LTNil }

// SetLazyAt puts l in the field key, the table's i-th key (see
// RawSetStringAt), of a small table, and reports whether it did (a table
// of another kind, or key not there: it did nothing).
func (tb *LTable) SetLazyAt(i int, key string, l *LLazy) bool {
	if i < len(tb.svals) {
		if s, ok := tb.keys[i].(LString); ok && string(s) == key {
			tb.svals[i] = l
			return true
		}
	}
	return false
}

// PeekAt reads the field key, the table's i-th key, as it is: an LLazy
// whose value was never read stays one.
func (tb *LTable) PeekAt(i int, key string) LValue {
	if i < len(tb.svals) {
		if s, ok := tb.keys[i].(LString); ok && string(s) == key {
			return tb.svals[i]
		}
	}
	return tb.RawGetString(key)
}

// PeekRecordAt is PeekAt for a table whose i-th key its caller knows to be
// key (see SetRecordAt): small enough to inline.
func (tb *LTable) PeekRecordAt(i int, key string) LValue {
	if i < len(tb.svals) {
		return tb.svals[i]
	}
	return tb.RawGetString(key)
}
