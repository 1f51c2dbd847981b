package luabind

import (
	"strings"

	lua "github.com/attune-dev/attune/internal/lua"
)

// Lua pattern matching under the time budget. gopher-lua's matcher cannot
// be interrupted: `string.find(string.rep("a", 100), ".-.-.-.-b")` backtracks
// for seconds inside one built-in call, past any budget. These are Lua 5.1's
// string.find, match, gmatch and gsub (lstrlib.c), with a step counter that
// checks the running callback's budget, a bound on pattern recursion and a
// bound on gsub's result.

const (
	maxCaptures    = 32
	maxMatchDepth  = 200     // recursion of one match (Lua 5.2's MAXCCALLS)
	capUnfinished  = -1      // capture opened, not closed
	capPosition    = -2      // () capture
	budgetEvery    = 1 << 12 // steps between budget checks
	maxStringBytes = maxRep  // largest string a built-in makes
)

type capture struct{ init, len int }

type matchState struct {
	L       *lua.LState
	src     string
	pat     string
	level   int
	capture [maxCaptures]capture
	depth   int
	steps   int
	done    <-chan struct{}
}

func newMatch(L *lua.LState, src, pat string) *matchState {
	ms := &matchState{L: L, src: src, pat: pat}
	if ctx := L.Context(); ctx != nil {
		ms.done = ctx.Done()
	}
	return ms
}

// tick counts one step and, every budgetEvery steps, stops the match when
// the budget is spent.
func (ms *matchState) tick() {
	ms.steps++
	if ms.steps%budgetEvery != 0 || ms.done == nil {
		return
	}
	select {
	case <-ms.done:
		ms.L.RaiseError("%s", ms.L.Context().Err())
	default:
	}
}

// pc returns the pattern byte at i, or 0 past its end (C's terminator).
func (ms *matchState) pc(i int) byte {
	if i < len(ms.pat) {
		return ms.pat[i]
	}
	return 0
}

func (ms *matchState) classEnd(p int) int {
	c := ms.pc(p)
	p++
	switch c {
	case '%':
		if p >= len(ms.pat) {
			ms.L.RaiseError("malformed pattern (ends with '%%')")
		}
		return p + 1
	case '[':
		if ms.pc(p) == '^' {
			p++
		}
		for {
			if p >= len(ms.pat) {
				ms.L.RaiseError("malformed pattern (missing ']')")
			}
			c := ms.pat[p]
			p++
			if c == '%' && p < len(ms.pat) {
				p++
			}
			if ms.pc(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

func isalpha(c byte) bool  { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isdigit(c byte) bool  { return c >= '0' && c <= '9' }
func islower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isupper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isspace(c byte) bool  { return c == ' ' || c >= '\t' && c <= '\r' }
func iscntrl(c byte) bool  { return c < 32 || c == 127 }
func ispunct(c byte) bool  { return c > 32 && c < 127 && !isalpha(c) && !isdigit(c) }
func isxdigit(c byte) bool { return isdigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func matchClass(c, cl byte) bool {
	var res bool
	lower := cl | 0x20
	switch lower {
	case 'a':
		res = isalpha(c)
	case 'c':
		res = iscntrl(c)
	case 'd':
		res = isdigit(c)
	case 'l':
		res = islower(c)
	case 'p':
		res = ispunct(c)
	case 's':
		res = isspace(c)
	case 'u':
		res = isupper(c)
	case 'w':
		res = isalpha(c) || isdigit(c)
	case 'x':
		res = isxdigit(c)
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if islower(cl) {
		return res
	}
	return !res
}

// matchBracket: p is at '[', ec at the closing ']'.
func (ms *matchState) matchBracket(c byte, p, ec int) bool {
	sig := true
	if ms.pc(p+1) == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case ms.pat[p] == '%':
			p++
			if matchClass(c, ms.pc(p)) {
				return sig
			}
		case ms.pc(p+1) == '-' && p+2 < ec:
			p += 2
			if ms.pat[p-2] <= c && c <= ms.pat[p] {
				return sig
			}
		case ms.pat[p] == c:
			return sig
		}
	}
	return !sig
}

func (ms *matchState) single(s, p, ep int) bool {
	if s >= len(ms.src) {
		return false
	}
	c := ms.src[s]
	switch ms.pc(p) {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.pc(p+1))
	case '[':
		return ms.matchBracket(c, p, ep-1)
	}
	return ms.pc(p) == c
}

// match returns the end of the match of pattern p at s, or -1.
func (ms *matchState) match(s, p int) int {
	ms.depth++
	if ms.depth > maxMatchDepth {
		ms.L.RaiseError("pattern too complex")
	}
	defer func() { ms.depth-- }()
	for {
		ms.tick()
		if p >= len(ms.pat) {
			return s
		}
		switch ms.pat[p] {
		case '(':
			if ms.pc(p+1) == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '%':
			switch ms.pc(p + 1) {
			case 'b':
				s = ms.matchBalance(s, p+2)
				if s < 0 {
					return -1
				}
				p += 4
				continue
			case 'f':
				p += 2
				if ms.pc(p) != '[' {
					ms.L.RaiseError("missing '[' after '%%f' in pattern")
				}
				ep := ms.classEnd(p)
				var prev, cur byte
				if s > 0 {
					prev = ms.src[s-1]
				}
				if s < len(ms.src) {
					cur = ms.src[s]
				}
				if ms.matchBracket(prev, p, ep-1) || !ms.matchBracket(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			default:
				if isdigit(ms.pc(p + 1)) {
					s = ms.matchCapture(s, ms.pc(p+1))
					if s < 0 {
						return -1
					}
					p += 2
					continue
				}
			}
		case '$':
			if p+1 == len(ms.pat) {
				if s == len(ms.src) {
					return s
				}
				return -1
			}
		}
		ep := ms.classEnd(p)
		m := ms.single(s, p, ep)
		switch ms.pc(ep) {
		case '?':
			if m {
				if res := ms.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
			continue
		case '*':
			return ms.maxExpand(s, p, ep)
		case '+':
			if !m {
				return -1
			}
			return ms.maxExpand(s+1, p, ep)
		case '-':
			return ms.minExpand(s, p, ep)
		}
		if !m {
			return -1
		}
		s++
		p = ep
	}
}

func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for ms.single(s+i, p, ep) {
		ms.tick()
		i++
	}
	for ; i >= 0; i-- {
		if res := ms.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res >= 0 {
			return res
		}
		if !ms.single(s, p, ep) {
			return -1
		}
		s++
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	if ms.level >= maxCaptures {
		ms.L.RaiseError("too many captures")
	}
	ms.capture[ms.level] = capture{init: s, len: what}
	ms.level++
	res := ms.match(s, p)
	if res < 0 {
		ms.level--
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := -1
	for k := ms.level - 1; k >= 0; k-- {
		if ms.capture[k].len == capUnfinished {
			l = k
			break
		}
	}
	if l < 0 {
		ms.L.RaiseError("invalid pattern capture")
	}
	ms.capture[l].len = s - ms.capture[l].init
	res := ms.match(s, p)
	if res < 0 {
		ms.capture[l].len = capUnfinished
	}
	return res
}

func (ms *matchState) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		ms.L.RaiseError("unbalanced pattern")
	}
	if s >= len(ms.src) || ms.src[s] != ms.pat[p] {
		return -1
	}
	b, e, cont := ms.pat[p], ms.pat[p+1], 1
	for s++; s < len(ms.src); s++ {
		ms.tick()
		switch ms.src[s] {
		case e:
			cont--
			if cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1
}

func (ms *matchState) matchCapture(s int, c byte) int {
	l := int(c) - '1'
	if l < 0 || l >= ms.level || ms.capture[l].len == capUnfinished {
		ms.L.RaiseError("invalid capture index")
	}
	n := ms.capture[l].len
	if n < 0 { // a position capture: Lua compares it as a huge unsigned length, which never matches
		return -1
	}
	if len(ms.src)-s >= n && ms.src[ms.capture[l].init:ms.capture[l].init+n] == ms.src[s:s+n] {
		return s + n
	}
	return -1
}

func (ms *matchState) oneCapture(i, s, e int) lua.LValue {
	if i >= ms.level {
		if i == 0 {
			return lua.LString(ms.src[s:e])
		}
		ms.L.RaiseError("invalid capture index")
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		ms.L.RaiseError("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	}
	return lua.LString(ms.src[c.init : c.init+c.len])
}

// pushCaptures pushes the captures (the whole match when there are none
// and wholeMatch is set) and returns how many.
func (ms *matchState) pushCaptures(s, e int, wholeMatch bool) int {
	n := ms.level
	if n == 0 && wholeMatch {
		n = 1
	}
	for i := 0; i < n; i++ {
		ms.L.Push(ms.oneCapture(i, s, e))
	}
	return n
}

// posrelat is Lua's relative string position.
func posrelat(pos, n int) int {
	if pos < 0 {
		pos += n + 1
	}
	if pos < 0 {
		return 0
	}
	return pos
}

func strFindAux(L *lua.LState, find bool) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	init := posrelat(L.OptInt(3, 1), len(src)) - 1
	if init < 0 {
		init = 0
	} else if init > len(src) {
		init = len(src)
	}
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(pat, "^$*+?.([%-")) {
		if k := strings.Index(src[init:], pat); k >= 0 {
			L.Push(lua.LNumber(init + k + 1))
			L.Push(lua.LNumber(init + k + len(pat)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	ms := newMatch(L, src, pat)
	p := 0
	anchor := ms.pc(0) == '^'
	if anchor {
		p = 1
	}
	for s := init; ; s++ {
		ms.level = 0
		if e := ms.match(s, p); e >= 0 {
			if find {
				L.Push(lua.LNumber(s + 1))
				L.Push(lua.LNumber(e))
				return ms.pushCaptures(-1, -1, false) + 2
			}
			return ms.pushCaptures(s, e, true)
		}
		if s >= len(src) || anchor {
			break
		}
	}
	L.Push(lua.LNil)
	return 1
}

func strFind(L *lua.LState) int  { return strFindAux(L, true) }
func strMatch(L *lua.LState) int { return strFindAux(L, false) }

func strGmatch(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		ms := newMatch(L, src, pat)
		for s := pos; s <= len(src); s++ {
			ms.level = 0
			if e := ms.match(s, 0); e >= 0 {
				pos = e
				if e == s {
					pos++
				}
				return ms.pushCaptures(s, e, true)
			}
		}
		pos = len(src) + 1
		return 0
	}))
	return 1
}

func strGsub(L *lua.LState) int {
	src := L.CheckString(1)
	pat := L.CheckString(2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LNumber, lua.LString, *lua.LTable, *lua.LFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	ms := newMatch(L, src, pat)
	p := 0
	anchor := ms.pc(0) == '^'
	if anchor {
		p = 1
	}
	var b strings.Builder
	grow := func(n int) {
		if b.Len()+n > maxStringBytes {
			L.RaiseCoded("memory", "memory: string.gsub: result over %d bytes", maxStringBytes)
		}
	}
	n, s := 0, 0
	for n < maxN {
		ms.level = 0
		e := ms.match(s, p)
		if e >= 0 {
			n++
			ms.addValue(&b, grow, repl, s, e)
		}
		switch {
		case e >= 0 && e > s:
			s = e
		case s < len(src):
			grow(1)
			b.WriteByte(src[s])
			s++
		default:
			goto done
		}
		if anchor {
			break
		}
	}
done:
	grow(len(src) - s)
	b.WriteString(src[s:])
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

func (ms *matchState) addValue(b *strings.Builder, grow func(int), repl lua.LValue, s, e int) {
	L := ms.L
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LNumber, lua.LString:
		news := lua.LVAsString(r)
		for len(news) > 0 {
			ms.tick()
			k := strings.IndexByte(news, '%')
			if k < 0 {
				grow(len(news))
				b.WriteString(news)
				break
			}
			grow(k)
			b.WriteString(news[:k])
			news = news[k+1:]
			if len(news) == 0 {
				break
			}
			d := news[0]
			news = news[1:]
			switch {
			case !isdigit(d):
				grow(1)
				b.WriteByte(d)
			case d == '0':
				grow(e - s)
				b.WriteString(ms.src[s:e])
			default:
				cv := lua.LVAsString(ms.oneCapture(int(d-'1'), s, e))
				grow(len(cv))
				b.WriteString(cv)
			}
		}
		return
	case *lua.LTable:
		v = L.GetTable(r, ms.oneCapture(0, s, e))
	case *lua.LFunction:
		L.Push(r)
		n := ms.pushCaptures(s, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	}
	if !lua.LVAsBool(v) {
		grow(e - s)
		b.WriteString(ms.src[s:e])
		return
	}
	switch v.(type) {
	case lua.LString, lua.LNumber:
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
	str := lua.LVAsString(v)
	grow(len(str))
	b.WriteString(str)
}
