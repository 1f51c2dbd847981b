package config_test

import (
	"fmt"

	"github.com/attune-dev/attune/config"
)

func ExampleParse() {
	src := []byte(`
[engine]
store = "memory:"
callback_budget = "500ms"

[bots.main]
behaviors = ["tasks", "goal"]
ceiling = ["read", "write"]
grants = ["tasks.create"]

[bots.main.config.goal]
loops = 3
`)
	cfg, err := config.Parse("/srv/app/attune.toml", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	main := cfg.Bots["main"]
	fmt.Println(cfg.Engine.Store, cfg.Engine.CallbackBudget, cfg.Engine.Project)
	fmt.Println(main.Behaviors, main.RetryBudget, main.Config["goal"]["loops"])

	// The checks that need the packs.
	installed := map[string]bool{"tasks": true}
	fmt.Println(cfg.Validate(func(name string) bool { return installed[name] }))
	// Output:
	// memory: 500ms default
	// [tasks goal] 2 3
	// /srv/app/attune.toml:7: bots.main.behaviors[2]: no pack holds program "goal"
}

func ExampleErrors() {
	src := []byte(`
[engine]
callback_budget = 5

[bots.main]
behaviors = ["tasks"]
ceilng = ["read"]
`)
	_, err := config.Parse("attune.toml", src)
	for _, e := range config.Errors(err) {
		fmt.Println(e.Line, e.Path)
	}
	fmt.Println(err)
	// Output:
	// 3 engine.callback_budget
	// 7 bots.main.ceilng
	// attune.toml:3: engine.callback_budget: want a duration like "1s", got integer 5
	// attune.toml:7: bots.main.ceilng: unknown key; did you mean "ceiling"?
}
