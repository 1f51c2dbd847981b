//go:build e2e

package scheme

// differentialExprs: the full corpus, for the full suite (see
// diff_corpus_test.go).
const differentialExprs = 600
