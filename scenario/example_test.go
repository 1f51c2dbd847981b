package scenario_test

import (
	"context"
	"fmt"

	"github.com/attune-dev/attune/scenario"
)

// A scenario drives the engine as a host would and checks each step.
func ExampleRun() {
	sc, err := scenario.Parse("example.toml", []byte(`
name  = "a post hook adds a diagnostic beside the result"
rules = ["R4.7"]

[config.bots.main]
behaviors = ["reviewer"]
ceiling   = ["read"]

[programs]
"reviewer.lua" = '''
hook.tool("fs/read", {post = function(c, outcome) return "read " .. c.args.path end})
'''

[host.tools."fs/read"]
effect = ["read"]
result = "hello"

[[step]]
op = "start"

[[step]]
op = "tool"
path = "fs/read"
args = {path = "notes.txt"}
expect = {result = "hello", diagnostics = ["read notes.txt"], core_calls = 1}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res := scenario.Run(context.Background(), sc)
	fmt.Println(res.Passed, res.Steps)
	// Output: true 2
}
