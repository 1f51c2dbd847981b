package lua

const defaultArrayCap = 32
const defaultHashCap = 32

type lValueArraySorter struct {
	L      *LState
	Fn     *LFunction
	Values []LValue
}

func (lv lValueArraySorter) Len() int {
	return len(lv.Values)
}

func (lv lValueArraySorter) Swap(i, j int) {
	lv.Values[i], lv.Values[j] = lv.Values[j], lv.Values[i]
}

func (lv lValueArraySorter) Less(i, j int) bool {
	if lv.Fn != nil {
		lv.L.Push(lv.Fn)
		lv.L.Push(lv.Values[i])
		lv.L.Push(lv.Values[j])
		lv.L.Call(2, 1)
		return LVAsBool(lv.L.reg.Pop())
	}
	return lessThan(lv.L, lv.Values[i], lv.Values[j])
}

func newLTable(acap int, hcap int) *LTable {
	if acap < 0 {
		acap = 0
	}
	if hcap < 0 {
		hcap = 0
	}
	tb := &LTable{}
	tb.Metatable = LNil
	if acap != 0 {
		tb.array = make([]LValue, 0, acap)
	}
	switch {
	case hcap > smallKeys:
		tb.strdict = make(map[string]LValue, hcap)
		// attune: the key order list sized like the hash part, so that
		// filling a table of hcap string keys does not grow it (the index
		// k2i is made only past smallKeys keys: see keyIndex)
		tb.keys = make([]LValue, 0, hcap)
	case hcap > 0:
		// attune: a small table keeps its string keys in keys and their
		// values in svals, one allocation for both (see small)
		kv := make([]LValue, 0, 2*hcap)
		tb.keys = kv[0:0:hcap]
		tb.svals = kv[hcap : hcap : 2*hcap]
	}
	return tb
}

// attune: small reports that the table has no hash maps: its hash part is
// at most smallKeys string keys, listed in keys (in the order they were
// first set, never removed, as in a large table) with their values in
// svals (LNil for a key set to nil). Looking a key up scans keys, which
// for a few keys is cheaper than hashing it, and a small table costs no
// map. The first non-string hash key, or one string key more, moves the
// strings into strdict (toStrdict) for good.
func (tb *LTable) small() bool { return tb.strdict == nil && tb.dict == nil }

// attune: smallIndex is the position of key in a small table's keys.
func (tb *LTable) smallIndex(key string) int {
	for i, k := range tb.keys {
		if s, ok := k.(LString); ok && string(s) == key {
			return i
		}
	}
	return -1
}

// KeysEverSet is how many hash keys the table has held: a key is listed
// when first set and stays listed when set to nil (attune: its record pools
// tell from it whether a handler added keys to a record).
func (tb *LTable) KeysEverSet() int { return len(tb.keys) }

// Count is the number of the table's entries (keys holding a value other
// than nil): what pairs visits, counted without visiting it (attune).
func (tb *LTable) Count() int {
	n := len(tb.strdict) + len(tb.dict) // the maps hold no nil
	for _, v := range tb.array {
		if v != LNil {
			n++
		}
	}
	for _, v := range tb.svals {
		if v != LNil {
			n++
		}
	}
	return n
}

// RawSetStringAt is RawSetString for a key that was the i-th hash key set
// on the table (attune: its records set their fields in a fixed order, and
// a key keeps its place): when the table is small and key is there, the
// value is stored without looking for it.
func (tb *LTable) RawSetStringAt(i int, key string, value LValue) {
	if i < len(tb.svals) {
		if s, ok := tb.keys[i].(LString); ok && string(s) == key {
			tb.svals[i] = value
			return
		}
	}
	tb.RawSetString(key, value)
}

// SetRecordAt stores value under the table's i-th hash key, which its
// caller knows to be key (attune: a record of its record pools, made with
// its fields set in a fixed order; a small table never reorders or drops
// its keys, and leaves small mode only by setting svals to nil). It is
// small enough to inline: no key comparison, no call.
func (tb *LTable) SetRecordAt(i int, key string, value LValue) {
	if i < len(tb.svals) {
		tb.svals[i] = value
		return
	}
	tb.rawSetString(key, nil, value)
}

// attune: sval is the value of a small table's i-th key, made first if
// it is an LLazy (which no reader ever gets).
func (tb *LTable) sval(i int) LValue {
	v := tb.svals[i]
	if l, ok := v.(*LLazy); ok {
		v = l.make()
		tb.svals[i] = v
	}
	return v
}

// attune: toStrdict moves a small table's string keys into strdict; keys
// stays as it is (the order of traversal does not change).
func (tb *LTable) toStrdict(hint int) {
	tb.strdict = make(map[string]LValue, max(hint, len(tb.keys)))
	for i, k := range tb.keys {
		if v := tb.sval(i); v != LNil {
			tb.strdict[string(k.(LString))] = v
		}
	}
	tb.svals = nil
}

// Len returns length of this LTable without using __len.
func (tb *LTable) Len() int {
	if tb.array == nil {
		return 0
	}
	var prev LValue = LNil
	for i := len(tb.array) - 1; i >= 0; i-- {
		v := tb.array[i]
		if prev == LNil && v != LNil {
			return i + 1
		}
		prev = v
	}
	return 0
}

// Append appends a given LValue to this LTable.
func (tb *LTable) Append(value LValue) {
	if value == LNil {
		return
	}
	if tb.array == nil {
		tb.array = make([]LValue, 0, defaultArrayCap)
	}
	if len(tb.array) == 0 || tb.array[len(tb.array)-1] != LNil {
		tb.array = append(tb.array, value)
	} else {
		i := len(tb.array) - 2
		for ; i >= 0; i-- {
			if tb.array[i] != LNil {
				break
			}
		}
		tb.array[i+1] = value
	}
}

// Insert inserts a given LValue at position `i` in this table.
func (tb *LTable) Insert(i int, value LValue) {
	if tb.array == nil {
		tb.array = make([]LValue, 0, defaultArrayCap)
	}
	if i > len(tb.array) {
		tb.RawSetInt(i, value)
		return
	}
	if i <= 0 {
		tb.RawSet(LNumber(i), value)
		return
	}
	i -= 1
	tb.array = append(tb.array, LNil)
	copy(tb.array[i+1:], tb.array[i:])
	tb.array[i] = value
}

// MaxN returns a maximum number key that nil value does not exist before it.
func (tb *LTable) MaxN() int {
	if tb.array == nil {
		return 0
	}
	for i := len(tb.array) - 1; i >= 0; i-- {
		if tb.array[i] != LNil {
			return i + 1
		}
	}
	return 0
}

// Remove removes from this table the element at a given position.
func (tb *LTable) Remove(pos int) LValue {
	if tb.array == nil {
		return LNil
	}
	larray := len(tb.array)
	if larray == 0 {
		return LNil
	}
	i := pos - 1
	oldval := LNil
	switch {
	case i >= larray:
		// nothing to do
	case i == larray-1 || i < 0:
		oldval = tb.array[larray-1]
		tb.array = tb.array[:larray-1]
	default:
		oldval = tb.array[i]
		copy(tb.array[i:], tb.array[i+1:])
		tb.array[larray-1] = nil
		tb.array = tb.array[:larray-1]
	}
	return oldval
}

// RawSet sets a given LValue to a given index without the __newindex metamethod.
// It is recommended to use `RawSetString` or `RawSetInt` for performance
// if you already know the given LValue is a string or number.
func (tb *LTable) RawSet(key LValue, value LValue) {
	switch v := key.(type) {
	case LNumber:
		if isArrayKey(v) {
			if tb.array == nil {
				tb.array = make([]LValue, 0, defaultArrayCap)
			}
			index := int(v) - 1
			alen := len(tb.array)
			switch {
			case index == alen:
				tb.array = append(tb.array, value)
			case index > alen:
				for i := 0; i < (index - alen); i++ {
					tb.array = append(tb.array, LNil)
				}
				tb.array = append(tb.array, value)
			case index < alen:
				tb.array[index] = value
			}
			return
		}
	case LString:
		tb.rawSetString(string(v), key, value) // attune: the key is boxed already
		return
	}

	tb.RawSetH(key, value)
}

// RawSetInt sets a given LValue at a position `key` without the __newindex metamethod.
func (tb *LTable) RawSetInt(key int, value LValue) {
	if key < 1 || key >= MaxArrayIndex {
		tb.RawSetH(LNumber(key), value)
		return
	}
	if tb.array == nil {
		tb.array = make([]LValue, 0, 32)
	}
	index := key - 1
	alen := len(tb.array)
	switch {
	case index == alen:
		tb.array = append(tb.array, value)
	case index > alen:
		for i := 0; i < (index - alen); i++ {
			tb.array = append(tb.array, LNil)
		}
		tb.array = append(tb.array, value)
	case index < alen:
		tb.array[index] = value
	}
}

// RawSetString sets a given LValue to a given string index without the __newindex metamethod.
func (tb *LTable) RawSetString(key string, value LValue) {
	tb.rawSetString(key, nil, value)
}

// attune: rawSetString is RawSetString with the key boxed already (boxed
// is LString(key)), or not (nil): a new key is listed with that box.
func (tb *LTable) rawSetString(key string, boxed LValue, value LValue) {
	if tb.small() { // attune
		if i := tb.smallIndex(key); i >= 0 {
			tb.svals[i] = value
			return
		}
		if value == LNil {
			return
		}
		if len(tb.keys) < smallKeys {
			if boxed == nil {
				boxed = LString(key)
			}
			tb.keys = append(tb.keys, boxed)
			tb.svals = append(tb.svals, value)
			return
		}
		tb.toStrdict(defaultHashCap)
	}
	if tb.strdict == nil {
		tb.strdict = make(map[string]LValue, defaultHashCap)
	}

	if value == LNil {
		// TODO tb.keys and tb.k2i should also be removed
		delete(tb.strdict, key)
		return
	}
	// attune: a key already in the hash part is already in keys (every
	// key set is added there and never removed): one map write for an
	// update, no boxing, no index lookup (a new key grows the map)
	n := len(tb.strdict)
	tb.strdict[key] = value
	if len(tb.strdict) != n {
		if boxed == nil {
			boxed = LString(key) // attune: boxed once, not per use
		}
		tb.addKey(boxed)
	}
}

// RawSetH sets a given LValue to a given index without the __newindex metamethod.
func (tb *LTable) RawSetH(key LValue, value LValue) {
	if s, ok := key.(LString); ok {
		tb.rawSetString(string(s), key, value) // attune: the key is boxed already
		return
	}
	if tb.dict == nil {
		if tb.strdict == nil && len(tb.keys) > 0 { // attune: small no more
			tb.toStrdict(0)
		}
		tb.dict = make(map[LValue]LValue, len(tb.strdict))
	}

	if value == LNil {
		// TODO tb.keys and tb.k2i should also be removed
		delete(tb.dict, key)
	} else {
		tb.dict[key] = value
		tb.addKey(key)
	}
}

// attune: smallKeys is how many hash keys a table lists before it indexes
// them in k2i; below that, keyIndex scans keys (a few comparisons, where the
// index cost two allocations per table).
const smallKeys = 8

// keyIndex is the position of key in keys.
func (tb *LTable) keyIndex(key LValue) (int, bool) {
	if tb.k2i != nil {
		i, ok := tb.k2i[key]
		return i, ok
	}
	if s, ok := key.(LString); ok && len(tb.svals) > 0 { // attune: small
		i := tb.smallIndex(string(s))
		return max(i, 0), i >= 0
	}
	for i, k := range tb.keys {
		if k == key {
			return i, true
		}
	}
	return 0, false
}

// addKey appends key to keys unless it is there already.
func (tb *LTable) addKey(key LValue) {
	if _, ok := tb.keyIndex(key); ok {
		return
	}
	tb.keys = append(tb.keys, key)
	switch {
	case tb.k2i != nil:
		tb.k2i[key] = len(tb.keys) - 1
	case len(tb.keys) > smallKeys:
		tb.k2i = make(map[LValue]int, 2*len(tb.keys))
		for i, k := range tb.keys {
			tb.k2i[k] = i
		}
	}
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGet(key LValue) LValue {
	switch v := key.(type) {
	case LNumber:
		if isArrayKey(v) {
			if tb.array == nil {
				return LNil
			}
			index := int(v) - 1
			if index >= len(tb.array) {
				return LNil
			}
			return tb.array[index]
		}
	case LString:
		return tb.RawGetString(string(v))
	}
	if tb.dict == nil {
		return LNil
	}
	if v, ok := tb.dict[key]; ok {
		return v
	}
	return LNil
}

// RawGetInt returns an LValue at position `key` without __index metamethod.
func (tb *LTable) RawGetInt(key int) LValue {
	if tb.array == nil {
		return LNil
	}
	index := int(key) - 1
	if index >= len(tb.array) || index < 0 {
		return LNil
	}
	return tb.array[index]
}

// RawGet returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetH(key LValue) LValue {
	if s, sok := key.(LString); sok {
		return tb.RawGetString(string(s))
	}
	if tb.dict == nil {
		return LNil
	}
	if v, ok := tb.dict[key]; ok {
		return v
	}
	return LNil
}

// RawGetString returns an LValue associated with a given key without __index metamethod.
func (tb *LTable) RawGetString(key string) LValue {
	if tb.strdict == nil {
		if tb.dict == nil { // attune: small
			if i := tb.smallIndex(key); i >= 0 {
				return tb.sval(i)
			}
		}
		return LNil
	}
	if v, vok := tb.strdict[string(key)]; vok {
		return v
	}
	return LNil
}

// ForEach iterates over this table of elements, yielding each in turn to a given function.
func (tb *LTable) ForEach(cb func(LValue, LValue)) {
	if tb.array != nil {
		for i, v := range tb.array {
			if v != LNil {
				cb(LNumber(i+1), v)
			}
		}
	}
	if tb.strdict != nil {
		for k, v := range tb.strdict {
			if v != LNil {
				cb(LString(k), v)
			}
		}
	} else if tb.dict == nil { // attune: small
		for i, k := range tb.keys {
			if v := tb.sval(i); v != LNil {
				cb(k, v)
			}
		}
	}
	if tb.dict != nil {
		for k, v := range tb.dict {
			if v != LNil {
				cb(k, v)
			}
		}
	}
}

// This function is equivalent to lua_next ( http://www.lua.org/manual/5.1/manual.html#lua_next ).
func (tb *LTable) Next(key LValue) (LValue, LValue) {
	init := false
	if key == LNil {
		key = LNumber(0)
		init = true
	}

	if init || key != LNumber(0) {
		if kv, ok := key.(LNumber); ok && isInteger(kv) && int(kv) >= 0 && kv < LNumber(MaxArrayIndex) {
			index := int(kv)
			if tb.array != nil {
				for ; index < len(tb.array); index++ {
					if v := tb.array[index]; v != LNil {
						return LNumber(index + 1), v
					}
				}
			}
			if tb.array == nil || index == len(tb.array) {
				if len(tb.keys) == 0 || (tb.dict == nil || len(tb.dict) == 0) && (tb.strdict == nil || len(tb.strdict) == 0) && !tb.small() {
					return LNil, LNil
				}
				key = tb.keys[0]
				if v := tb.RawGetH(key); v != LNil {
					return key, v
				}
			}
		}
	}

	at, _ := tb.keyIndex(key) // attune: 0 when absent, as k2i[key] was
	if len(tb.svals) > 0 {    // attune: small: the values by place
		for i := at + 1; i < len(tb.keys); i++ {
			if v := tb.sval(i); v != LNil {
				return tb.keys[i], v
			}
		}
		return LNil, LNil
	}
	for i := at + 1; i < len(tb.keys); i++ {
		key := tb.keys[i]
		if v := tb.RawGetH(key); v != LNil {
			return key, v
		}
	}
	return LNil, LNil
}
