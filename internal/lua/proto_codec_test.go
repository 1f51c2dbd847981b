package lua

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attune-dev/attune/internal/lua/parse"
)

func compileFile(t testing.TB, path string) *FunctionProto {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return compileString(t, filepath.Base(path), string(src))
}

func compileString(t testing.TB, name, src string) *FunctionProto {
	t.Helper()
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(chunk, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func roundTrip(t testing.TB, p *FunctionProto) *FunctionProto {
	t.Helper()
	enc, err := EncodeProto(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := DecodeProto(enc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeProto(nil, q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, again) {
		t.Fatal("the decoded proto encodes differently")
	}
	if msg := protoDiff(p, q, "main"); msg != "" {
		t.Fatal(msg)
	}
	return q
}

// protoDiff names the first field where two protos differ ("" when none);
// an empty list equals a nil one, numbers compare by their bits.
func protoDiff(a, b *FunctionProto, at string) string {
	switch {
	case a.SourceName != b.SourceName, a.LineDefined != b.LineDefined, a.LastLineDefined != b.LastLineDefined,
		a.NumUpvalues != b.NumUpvalues, a.NumParameters != b.NumParameters, a.IsVarArg != b.IsVarArg,
		a.NumUsedRegisters != b.NumUsedRegisters:
		return at + ": header differs"
	case !eqSlice(a.Code, b.Code):
		return at + ": code differs"
	case !eqSlice(a.DbgSourcePositions, b.DbgSourcePositions):
		return at + ": source positions differ"
	case !eqSlice(a.DbgCalls, b.DbgCalls):
		return at + ": calls differ"
	case !eqSlice(a.DbgUpvalues, b.DbgUpvalues):
		return at + ": upvalue names differ"
	case !eqSlice(a.stringConstants, b.stringConstants):
		return at + ": string constants differ"
	case len(a.Constants) != len(b.Constants), len(a.DbgLocals) != len(b.DbgLocals),
		len(a.FunctionPrototypes) != len(b.FunctionPrototypes):
		return at + ": counts differ"
	}
	for i, c := range a.Constants {
		d := b.Constants[i]
		if c.Type() != d.Type() {
			return at + ": constant type differs"
		}
		if n, ok := c.(LNumber); ok {
			if math.Float64bits(float64(n)) != math.Float64bits(float64(d.(LNumber))) {
				return at + ": number constant differs"
			}
		} else if c != d {
			return at + ": constant differs"
		}
	}
	for i, l := range a.DbgLocals {
		if *l != *b.DbgLocals[i] {
			return at + ": locals differ"
		}
	}
	for i, c := range a.FunctionPrototypes {
		if msg := protoDiff(c, b.FunctionPrototypes[i], at+"/"+string(rune('0'+i%10))); msg != "" {
			return msg
		}
	}
	return ""
}

func eqSlice[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProtoCodecSuites: every script of the Lua suites this fork runs,
// compiled, encoded and decoded, is the same proto, and runs the suite
// to its end from the decoded proto.
func TestProtoCodecSuites(t *testing.T) {
	for dir, scripts := range map[string][]string{"glua": gluaTests, "lua5.1": luaTests} {
		abs, err := filepath.Abs(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, script := range scripts {
			t.Run(dir+"/"+script, func(t *testing.T) {
				t.Chdir(abs)
				t.Cleanup(func() { os.Unsetenv("_____GLUATEST______") }) // os.lua sets it, TestGlua's run wants it unset
				q := roundTrip(t, compileFile(t, script))
				L := NewState(Options{RegistrySize: 1024 * 20, CallStackSize: 1024})
				defer L.Close()
				L.SetMx(maxMemory)
				L.Push(L.NewFunctionFromProto(q))
				if err := L.PCall(0, MultRet, nil); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestProtoCodecErrorPositions: an error raised by a decoded proto names
// the same file:line as the one compiled from source, and a call of a
// missing function names its callee the same way.
func TestProtoCodecErrorPositions(t *testing.T) {
	src := "local t = {}\n\nlocal function f(x)\n  return x.y.z\nend\n\nfunction g() refuze(1) end\n\nreturn f, g\n"
	run := func(p *FunctionProto) []string {
		L := NewState()
		defer L.Close()
		L.Push(L.NewFunctionFromProto(p))
		if err := L.PCall(0, 2, nil); err != nil {
			t.Fatal(err)
		}
		f, g := L.Get(-2), L.Get(-1)
		var out []string
		for _, fn := range []LValue{f, g} {
			L.Push(fn)
			L.Push(LNumber(1))
			err := L.PCall(1, 0, nil)
			if err == nil {
				t.Fatal("no error")
			}
			out = append(out, err.(*ApiError).Object.String())
		}
		return out
	}
	p := compileString(t, "prog.lua", src)
	want := run(p)
	got := run(roundTrip(t, p))
	if !strings.HasPrefix(want[0], "prog.lua:4:") || !strings.Contains(want[1], "prog.lua:7:") || !strings.Contains(want[1], "refuze") {
		t.Fatalf("from source: %q", want)
	}
	if !eqSlice(want, got) {
		t.Fatalf("from source %q, decoded %q", want, got)
	}
}

// TestProtoCodecRefuses: every truncation of an encoding, bytes after it
// and a wrong magic are errors (never a panic, never a proto).
func TestProtoCodecRefuses(t *testing.T) {
	p := compileString(t, "x.lua", "local a = {1, 'two', true, nil, 3.5}\nreturn function(b) return a[b] end\n")
	enc, err := EncodeProto(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(enc) {
		if _, err := DecodeProto(enc[:n]); !errors.Is(err, ErrProtoCodec) {
			t.Fatalf("prefix of %d/%d bytes: %v", n, len(enc), err)
		}
	}
	if _, err := DecodeProto(append(append([]byte(nil), enc...), 0)); !errors.Is(err, ErrProtoCodec) {
		t.Fatalf("trailing byte: %v", err)
	}
	bad := append([]byte(nil), enc...)
	bad[0] ^= 1
	if _, err := DecodeProto(bad); !errors.Is(err, ErrProtoCodec) {
		t.Fatalf("bad magic: %v", err)
	}
}

func FuzzDecodeProto(f *testing.F) {
	p := compileString(f, "x.lua", "local a = {1, 'two', true}\nreturn function(b) return a[b] .. 'x' end\n")
	enc, _ := EncodeProto(nil, p)
	f.Add(enc)
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeProto(data)
		if err != nil {
			return
		}
		if _, err := EncodeProto(nil, q); err != nil {
			t.Fatal(err)
		}
	})
}
