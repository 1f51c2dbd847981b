package lua

// attune: a compiled FunctionProto written to bytes and read back, so a
// host can keep compiled programs between processes (attune's program
// cache). The encoding is this fork's own, not Lua's bytecode dump: the
// instructions as compiled, the constants (nil, booleans, numbers,
// strings), the nested protos and every piece of debug information the VM
// and error messages read (source positions, locals, calls with their
// callees, upvalue names), so a decoded proto runs and fails exactly as
// the one compiled from source, with the same file:line positions.
//
// DecodeProto checks the shape of what it reads (lengths, counts, the
// nesting depth), never panics, and refuses bytes left over; it does not
// check the instructions. Bytes from an untrusted place must be
// authenticated before they are decoded: the VM trusts its instructions.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ProtoCodecVersion names the encoding; it changes whenever the encoding
// or the meaning of an instruction changes.
const ProtoCodecVersion = 1

const (
	protoMagic     = "ALP\x01"
	maxProtoDepth  = 256 // nested function definitions
	constNil       = 0
	constFalse     = 1
	constTrue      = 2
	constNumber    = 3
	constString    = 4
	maxProtoString = 1 << 26
)

// ErrProtoCodec is what DecodeProto returns (wrapped) for bytes that are
// not an encoded proto.
var ErrProtoCodec = errors.New("lua: not an encoded proto")

// EncodeProto appends the encoding of p to buf. Constants other than nil,
// booleans, numbers and strings (which the compiler never makes) are an
// error.
func EncodeProto(buf []byte, p *FunctionProto) ([]byte, error) {
	buf = append(buf, protoMagic...)
	return encodeProto(buf, p, 0)
}

func encodeProto(b []byte, p *FunctionProto, depth int) ([]byte, error) {
	if depth > maxProtoDepth {
		return nil, fmt.Errorf("lua: encode proto: nested deeper than %d", maxProtoDepth)
	}
	b = appendStr(b, p.SourceName)
	b = binary.AppendVarint(b, int64(p.LineDefined))
	b = binary.AppendVarint(b, int64(p.LastLineDefined))
	b = append(b, p.NumUpvalues, p.NumParameters, p.IsVarArg, p.NumUsedRegisters)
	b = binary.AppendUvarint(b, uint64(len(p.Code)))
	for _, c := range p.Code {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(p.Constants)))
	for i, c := range p.Constants {
		switch v := c.(type) {
		case *LNilType:
			b = append(b, constNil)
		case LBool:
			if v {
				b = append(b, constTrue)
			} else {
				b = append(b, constFalse)
			}
		case LNumber:
			b = append(b, constNumber)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(v)))
		case LString:
			b = append(b, constString)
			b = appendStr(b, string(v))
		default:
			return nil, fmt.Errorf("lua: encode proto %s:%d: constant %d is a %s", p.SourceName, p.LineDefined, i, c.Type())
		}
	}
	b = binary.AppendUvarint(b, uint64(len(p.FunctionPrototypes)))
	for _, c := range p.FunctionPrototypes {
		var err error
		if b, err = encodeProto(b, c, depth+1); err != nil {
			return nil, err
		}
	}
	b = binary.AppendUvarint(b, uint64(len(p.DbgSourcePositions)))
	for _, n := range p.DbgSourcePositions {
		b = binary.AppendVarint(b, int64(n))
	}
	b = binary.AppendUvarint(b, uint64(len(p.DbgLocals)))
	for _, l := range p.DbgLocals {
		b = appendStr(b, l.Name)
		b = binary.AppendVarint(b, int64(l.StartPc))
		b = binary.AppendVarint(b, int64(l.EndPc))
	}
	b = binary.AppendUvarint(b, uint64(len(p.DbgCalls)))
	for _, c := range p.DbgCalls {
		b = appendStr(b, c.Name)
		b = binary.AppendVarint(b, int64(c.Pc))
		b = appendStr(b, c.Callee)
		b = appendStr(b, c.CalleeKind)
	}
	b = binary.AppendUvarint(b, uint64(len(p.DbgUpvalues)))
	for _, s := range p.DbgUpvalues {
		b = appendStr(b, s)
	}
	return b, nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeProto reads a proto that EncodeProto wrote. The proto it returns
// is a new one, shared by nobody.
func DecodeProto(data []byte) (p *FunctionProto, err error) {
	if len(data) < len(protoMagic) || string(data[:len(protoMagic)]) != protoMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrProtoCodec)
	}
	// every string of the proto is a slice of one copy of data: one
	// allocation, not one per name
	d := protoDecoder{b: data[len(protoMagic):], all: string(data[len(protoMagic):])}
	p = d.proto(0)
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the proto", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

type protoDecoder struct {
	b   []byte
	all string // what b was at the start, as a string
	err error
	// the lists of all the protos are cut from a few large arrays: a
	// cached program is loaded by every process, a few allocations each
	protos slab[FunctionProto]
	codes  slab[uint32]
	consts slab[LValue]
	strs   slab[string]
	ints   slab[int]
	locals slab[DbgLocalInfo]
	lptrs  slab[*DbgLocalInfo]
	calls  slab[DbgCall]
	fps    slab[*FunctionProto]
}

// slab hands out slices of a shared array, each with no room to grow
// into the next.
type slab[T any] struct {
	buf  []T
	grow int // the size of the next array: doubled each time, from 16 to 1024
}

func (s *slab[T]) take(n int) []T {
	if n > len(s.buf) {
		s.grow = min(max(2*s.grow, 16), 1024)
		s.buf = make([]T, max(n, s.grow))
	}
	out := s.buf[:n:n]
	s.buf = s.buf[n:]
	return out
}

func (d *protoDecoder) fail(format string, a ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrProtoCodec}, a...)...)
	}
	d.b = nil
}

func (d *protoDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad count")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *protoDecoder) int() int {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 || v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// count reads a count of items each at least size bytes long.
func (d *protoDecoder) count(size int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/size) {
		d.fail("count %d past the end", n)
		return 0
	}
	return int(n)
}

func (d *protoDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *protoDecoder) str() string {
	n := d.uvarint()
	if d.err == nil && (n > maxProtoString || n > uint64(len(d.b))) {
		d.fail("string of %d bytes past the end", n)
	}
	at := len(d.all) - len(d.b)
	if d.bytes(int(n)); d.err != nil {
		return ""
	}
	return d.all[at : at+int(n)]
}

func (d *protoDecoder) proto(depth int) *FunctionProto {
	if depth > maxProtoDepth {
		d.fail("nested deeper than %d", maxProtoDepth)
		return nil
	}
	p := &d.protos.take(1)[0]
	p.SourceName = d.str()
	p.LineDefined = d.int()
	p.LastLineDefined = d.int()
	if h := d.bytes(4); h != nil {
		p.NumUpvalues, p.NumParameters, p.IsVarArg, p.NumUsedRegisters = h[0], h[1], h[2], h[3]
	}
	if n := d.count(4); n > 0 {
		raw := d.bytes(4 * n)
		p.Code = d.codes.take(n)
		for i := range p.Code {
			p.Code[i] = binary.LittleEndian.Uint32(raw[4*i:])
		}
	}
	if n := d.count(1); n > 0 {
		p.Constants = d.consts.take(n)
		p.stringConstants = d.strs.take(n)
		for i := range p.Constants {
			tag := d.bytes(1)
			if tag == nil {
				return nil
			}
			switch tag[0] {
			case constNil:
				p.Constants[i] = LNil
			case constFalse:
				p.Constants[i] = LFalse
			case constTrue:
				p.Constants[i] = LTrue
			case constNumber:
				raw := d.bytes(8)
				if raw == nil {
					return nil
				}
				p.Constants[i] = LNumber(math.Float64frombits(binary.LittleEndian.Uint64(raw)))
			case constString:
				s := d.str()
				p.Constants[i] = LString(s)
				p.stringConstants[i] = s
			default:
				d.fail("constant of kind %d", tag[0])
				return nil
			}
		}
	}
	if n := d.count(1); n > 0 {
		p.FunctionPrototypes = d.fps.take(n)
		for i := range p.FunctionPrototypes {
			if p.FunctionPrototypes[i] = d.proto(depth + 1); d.err != nil {
				return nil
			}
		}
	}
	if n := d.count(1); n > 0 {
		p.DbgSourcePositions = d.ints.take(n)
		for i := range p.DbgSourcePositions {
			p.DbgSourcePositions[i] = d.int()
		}
	}
	if n := d.count(3); n > 0 {
		p.DbgLocals = d.lptrs.take(n)
		infos := d.locals.take(n)
		for i := range p.DbgLocals {
			infos[i] = DbgLocalInfo{Name: d.str(), StartPc: d.int(), EndPc: d.int()}
			p.DbgLocals[i] = &infos[i]
		}
	}
	if n := d.count(4); n > 0 {
		p.DbgCalls = d.calls.take(n)
		for i := range p.DbgCalls {
			p.DbgCalls[i] = DbgCall{Name: d.str(), Pc: d.int(), Callee: d.str(), CalleeKind: d.str()}
		}
	}
	if n := d.count(1); n > 0 {
		p.DbgUpvalues = d.strs.take(n)
		for i := range p.DbgUpvalues {
			p.DbgUpvalues[i] = d.str()
		}
	}
	if d.err != nil {
		return nil
	}
	if int(p.NumUpvalues) != len(p.DbgUpvalues) || len(p.DbgSourcePositions) != len(p.Code) {
		d.fail("inconsistent proto at %s:%d", p.SourceName, p.LineDefined)
		return nil
	}
	return p
}
