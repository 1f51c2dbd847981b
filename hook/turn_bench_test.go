package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/attune-dev/attune/harness"
	"github.com/attune-dev/attune/session"
	"github.com/attune-dev/attune/store"
)

func preEventID(id string) []byte {
	return []byte(fmt.Sprintf(`{"hook_event_name":"PreToolUse","session_id":"bench","cwd":"/w","tool_name":"Bash","tool_use_id":"toolu_%s","tool_input":{"command":"go test ./...","description":"test"}}`, id))
}

func postEventID(id string) []byte {
	return []byte(fmt.Sprintf(`{"hook_event_name":"PostToolUse","session_id":"bench","cwd":"/w","tool_name":"Bash","tool_use_id":"toolu_%s","tool_input":{"command":"go test ./...","description":"test"},"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}`, id))
}

func postToolEvent(k int) []byte { return postEventID(fmt.Sprint(k)) }

// handleEvent runs one Claude Code event through r; a denial fails b.
func handleEvent(b *testing.B, r *harness.Runtime, event []byte) {
	e, err := harness.Claude().Parse(event)
	if err != nil {
		b.Fatal(err)
	}
	if a := r.Handle(context.Background(), harness.Claude(), e); a.Decision == "deny" || a.Decision == "block" {
		b.Fatalf("%s: %+v", event, a)
	}
}

// openTurn leaves the session "bench" of cfg with a turn open holding
// calls PreToolUse + PostToolUse pairs (2*calls events after the prompt).
// The first pair runs through a runtime; the others are its journal
// entries again, under other tool_use_ids and call ids, appended to the
// store directly, so that the setup costs the same whatever a pair costs.
func openTurn(b *testing.B, cfg string, calls int) {
	b.Helper()
	ctx := context.Background()
	r, err := harness.Open(ctx, cfg, harness.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	handleEvent(b, r, []byte(`{"hook_event_name":"UserPromptSubmit","session_id":"bench","prompt":"go"}`))
	if calls == 0 {
		return
	}
	st := r.Engine().Store()
	ids, err := st.ListRecords(ctx, "instance", "")
	if err != nil || len(ids) != 1 {
		b.Fatalf("instances %v: %v", ids, err)
	}
	data, err := st.GetRecord(ctx, "instance", ids[0])
	if err != nil {
		b.Fatal(err)
	}
	var rec struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		b.Fatal(err)
	}
	log := session.LogName(rec.Session, ids[0])
	n0, err := st.Length(ctx, log)
	if err != nil {
		b.Fatal(err)
	}
	handleEvent(b, r, preEventID("tpl"))
	handleEvent(b, r, postEventID("tpl"))
	pair, err := st.Read(ctx, log, n0, 0)
	if err != nil {
		b.Fatal(err)
	}
	callID := ""
	for _, en := range pair {
		var e session.Entry
		if json.Unmarshal(en.Data, &e) == nil && e.Type == "tool-open" {
			callID = e.CallID
		}
	}
	if callID == "" {
		b.Fatalf("no call left open in %d entries", len(pair))
	}
	var batch [][]byte
	for k := 1; k < calls; k++ {
		for _, en := range pair {
			d := bytes.ReplaceAll(en.Data, []byte(`"toolu_tpl"`), []byte(fmt.Sprintf(`"toolu_old%d"`, k)))
			batch = append(batch, bytes.ReplaceAll(d, []byte(`"`+callID+`"`), []byte(fmt.Sprintf(`"%s-old%d"`, callID, k))))
		}
		if len(batch) >= 3000 || k == calls-1 {
			if _, err := st.Append(ctx, log, store.Any, batch, nil); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// BenchmarkHookOpenTurn: a PreToolUse + PostToolUse pair, each event in a
// runtime of its own (built, run and closed as a hook process does; one Lua
// guard, the SQLite store), in a fresh turn and after 4,000 events in the
// same open turn: the long turn costs what the fresh one does. Each store
// open rebuilds SQLite's WAL index from the WAL's valid frames, which grow
// to the 256-page checkpoint and start again (about 100 pairs): a run
// shorter than a few such cycles measures where in the cycle each case
// began (the long turn's setup leaves a full WAL, a fresh one an empty
// one), not the turn's length, so run at least 300 pairs:
//
//	go test ./hook -run XXX -bench HookOpenTurn -benchtime 300x -count 3
func BenchmarkHookOpenTurn(b *testing.B) {
	for _, events := range []int{0, 4000} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			cfg := benchProject(b, `"g"`, map[string]string{"g.lua": luaGuard})
			openTurn(b, cfg, events/2)
			ctx := context.Background()
			event := func(ev []byte) {
				r, err := harness.Open(ctx, cfg, harness.Options{})
				if err != nil {
					b.Fatal(err)
				}
				handleEvent(b, r, ev)
				r.Close()
			}
			event(preEventID("warm")) // as the last event before would have
			event(postEventID("warm"))
			b.ResetTimer()
			for k := range b.N {
				event(preEvent(k))
				event(postToolEvent(k))
			}
		})
	}
}
