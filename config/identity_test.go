package config

import (
	"strings"
	"testing"
)

func TestIdentityTable(t *testing.T) {
	cfg, err := Parse("attune.toml", []byte("[identity]\nauthor = \"alice@example.com\"\nhost = \"m1\"\n"))
	if err != nil || cfg.Identity != (Identity{Author: "alice@example.com", Host: "m1"}) {
		t.Fatalf("%+v %v", cfg.Identity, err)
	}
	for src, want := range map[string]string{
		"[identity]\nhots = \"m1\"\n": `attune.toml:2: identity.hots: unknown key; did you mean "host"?`,
		"[identity]\nauthor = 3\n":    "attune.toml:2: identity.author",
		"[identity]\nauthor = \"\"\n": "attune.toml:2: identity.author: want a non-empty string",
		"[identiy]\nauthor = \"a\"\n": `did you mean "identity"?`,
	} {
		if _, err := Parse("attune.toml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}
