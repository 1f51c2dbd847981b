module github.com/attune-dev/attune/internal/jsonscan/compare

go 1.26.0

require (
	github.com/attune-dev/attune v0.0.0
	github.com/go-json-experiment/json v1.27.2
)

replace github.com/attune-dev/attune => ../../..
