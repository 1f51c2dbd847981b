package lua

// attune: what a Go function may ask about how it was called.

// CallStackDepth is the number of frames on the call stack: the frame a
// call pushes next gets this index.
func (ls *LState) CallStackDepth() int { return ls.stack.Sp() }

// TailCalledFrom reports whether the running Go function was called by a
// Lua "return f(...)" (a tail call), and the call-stack index of the Lua
// frame that made it: the Go function's results are that frame's results.
func (ls *LState) TailCalledFrom() (int, bool) {
	cf := ls.currentFrame
	if cf == nil || !cf.Fn.IsG || cf.Parent == nil || cf.Parent.Fn.IsG {
		return 0, false
	}
	// A call puts its results in its caller's registers, above the
	// caller's own return base; a tail call puts them where the caller's
	// results go (OP_TAILCALL).
	if cf.ReturnBase != cf.Parent.ReturnBase {
		return 0, false
	}
	return cf.Parent.Idx, true
}

// NumberValue is n as an LValue, boxed in the state's blocks of numbers as
// the VM boxes its results (no allocation of its own).
func (ls *LState) NumberValue(n LNumber) LValue { return ls.alloc.LNumber2I(n) }

// maxBlockString is the longest string StringValue boxes in a block: a
// block keeps the strings of all its values alive while one lives.
const maxBlockString = 64

// StringValue is s as an LValue: a short string is boxed in one of the
// state's blocks of strings (no allocation of its own), a longer one on its
// own.
func (ls *LState) StringValue(s string) LValue {
	if len(s) == 0 || len(s) > maxBlockString {
		return LString(s)
	}
	return ls.alloc.LString2I(s)
}
