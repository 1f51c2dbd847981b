//go:build race
// +build race

package luar

import (
	"runtime"
	"testing"

	"github.com/attune-dev/attune/internal/lua"
)

func Test_functhread(t *testing.T) {
	L := lua.NewState()
	defer L.Close()

	var fn func(x int) string
	L.SetGlobal("fn", New(L, &fn))

	if err := L.DoString(`_ = fn ^ function(x) return tostring(x) .. "!"  end`); err != nil {
		t.Fatal(err)
	}

	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}

			// pushed and popped again: upstream only pushed, which on a
			// loaded machine fills the registry (registry overflow) before
			// fn returns
			L.Push(lua.LNumber(1000))
			L.Pop(1)

			runtime.Gosched()
		}
	}()

	if ret := fn(123); ret != "123!" {
		t.Fatalf("expected %#v, got %#v", "123!", ret)
	}
}
