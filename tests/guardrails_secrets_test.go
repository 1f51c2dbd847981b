package tests

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/attune-dev/attune/config"
	"github.com/attune-dev/attune/engine"
	"github.com/attune-dev/attune/store"
)

// The guardrails secrets detectors over their corpus
// (behaviors/testdata/secrets-corpus.tsv): every line is a text and the
// detector that must fire on it, or none for a look-alike. A detection
// of the labelled detector is a true positive, any other a false
// positive, a labelled line with no such detection a false negative. The
// test prints precision and recall and fails below the thresholds.
func TestGuardrailsSecretsCorpus(t *testing.T) {
	const minPrecision, minRecall = 0.95, 0.95
	ctx := context.Background()
	cfg, err := config.Parse("attune.toml", []byte(`
[engine]
store = "memory:"

[bots.main]
behaviors = ["guardrails"]
ceiling = ["read"]

[bots.main.config.guardrails.secrets]
`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Options{Config: cfg, Store: store.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	i, err := e.Start(ctx, engine.StartOptions{ID: "corpus", Bot: "main"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../behaviors/testdata/secrets-corpus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tp, fp, fn, lines int
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		label, text, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("secrets-corpus.tsv:%d: want LABEL<TAB>TEXT", n)
		}
		lines++
		text = strings.ReplaceAll(text, `\n`, "\n")
		out := i.Method(ctx, engine.MethodCall{Owner: "guardrails", Method: "scan", Input: map[string]any{"text": text}})
		if out.Status != "ok" {
			t.Fatalf("secrets-corpus.tsv:%d: scan: %s %s %s", n, out.Status, out.Reason, out.Error)
		}
		found := false
		names, _ := out.Result.([]any)
		for _, x := range names {
			if x == label {
				found = true
				tp++
			} else {
				fp++
				t.Logf("secrets-corpus.tsv:%d: false positive %v in %q", n, x, text)
			}
		}
		if label != "none" && !found {
			fn++
			t.Logf("secrets-corpus.tsv:%d: missed %s in %q", n, label, text)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if tp == 0 {
		t.Fatal("the corpus found no secret at all")
	}
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	t.Logf("guardrails secrets: %d lines, precision %.3f (%d/%d), recall %.3f (%d/%d)", lines, precision, tp, tp+fp, recall, tp, tp+fn)
	if precision < minPrecision || recall < minRecall {
		t.Errorf("precision %.3f, recall %.3f: want at least %.2f and %.2f", precision, recall, minPrecision, minRecall)
	}
}
