//go:build !e2e

package scheme

// differentialExprs is how many random expressions TestDifferential lowers
// in each of its six destinations in the default `go test ./...`: a quarter
// of the full corpus (the seed is fixed, so these are its first 150), which
// reaches all but a few of the statements it reaches (-cover: 75.6% of the
// package against 76.1%). `go test -tags e2e` (bash scripts/test, CI) runs
// the full corpus, and FuzzLower explores beyond it.
const differentialExprs = 150
