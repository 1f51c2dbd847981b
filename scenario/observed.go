package scenario

import (
	"strconv"
	"strings"
)

// maxObserved bounds a value shown in an observed outcome.
const maxObserved = 200

// stepLabel names a step by its op and subject: "tool fs/read",
// "method tasks.add", "command goal".
func stepLabel(s *Step) string {
	switch s.Op {
	case "tool":
		return "tool " + s.Path
	case "method":
		return "method " + s.Owner + "." + s.Method
	case "command":
		return "command /" + s.Name
	case "state", "reset":
		return s.Op + " " + s.Owner
	case "start", "restart", "spawn":
		if s.Op == "spawn" {
			return "spawn " + s.Child
		}
		return s.Op + " " + s.Instance
	case "edit", "forget":
		return s.Op + " " + s.Program
	case "set-read":
		return "set-read " + s.Key
	}
	return s.Op
}

// Observed renders what a step returned, compactly, for -v: the status
// and its error or reason, then the values the op returns.
func Observed(s *Step, g *Got) string {
	var f []string
	switch g.Status {
	case "refused":
		by := g.RefusedBy
		if by == "" {
			by = "?"
		}
		f = append(f, "refused by "+by+": "+strconv.Quote(g.Reason))
	case "failed":
		f = append(f, "failed: "+strconv.Quote(firstLine(g.Error)))
	default:
		f = append(f, g.Status)
	}
	if g.Result != nil {
		f = append(f, "result = "+clip(Format(g.Result)))
	}
	if len(g.Diagnostics) > 0 {
		f = append(f, "diagnostics = "+clip(Format(g.Diagnostics)))
	}
	if len(g.Notes) > 0 && s.Op != "turn" && s.Op != "turn-end" { // those carry them in result
		f = append(f, "notes = "+clip(formatNotes(g.Notes)))
	}
	switch s.Op {
	case "round-end", "turn":
		f = append(f, "continue = "+strconv.FormatBool(g.Continue))
	}
	if s.Op == "turn" {
		f = append(f, "rounds = "+strconv.Itoa(g.Rounds))
	}
	if g.HasRevision {
		f = append(f, "revision = "+strconv.FormatInt(g.Revision, 10))
	}
	if g.HasState {
		f = append(f, "state = "+clip(Format(g.State)))
	}
	if g.CoreCalls > 0 {
		f = append(f, "core_calls = "+strconv.Itoa(g.CoreCalls))
	}
	if g.HostReads > 0 {
		f = append(f, "host_reads = "+strconv.Itoa(g.HostReads))
	}
	if len(g.FloorMarks) > 0 {
		f = append(f, "floor saw marks "+Format(orStrings(g.FloorMarks)))
	}
	return strings.Join(f, ", ")
}

func clip(s string) string {
	if len(s) <= maxObserved {
		return s
	}
	return s[:maxObserved] + "..."
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func orStrings(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
