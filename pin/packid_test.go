package pin

import (
	"strings"
	"testing"
	"testing/fstest"
)

// A pack's identity is its pack.toml id, else its folder's base name,
// never its path; the engine's own pack is "attune".
func TestPackIdentity(t *testing.T) {
	for _, c := range []struct {
		pack Pack
		want string
		err  string
	}{
		{Pack{Name: "/home/alice/repo/bots", FS: fstest.MapFS{}}, "bots", ""},
		{Pack{Name: "/srv/clone/bots/", FS: fstest.MapFS{}}, "bots", ""},
		{Pack{Name: "behaviors", ID: EnginePackID}, "attune", ""},
		{Pack{Name: "/x/y", FS: fstest.MapFS{"pack.toml": {Data: []byte("id = \"acme/tasks\"\n")}}}, "acme/tasks", ""},
		{Pack{Name: "/x/y", FS: fstest.MapFS{"pack.toml": {Data: []byte("# no id\n")}}}, "y", ""},
		{Pack{Name: "/x/y", FS: fstest.MapFS{"pack.toml": {Data: []byte("id = \"\"\n")}}}, "", "/x/y/pack.toml: id: empty"},
		{Pack{Name: "/x/y", FS: fstest.MapFS{"pack.toml": {Data: []byte("idd = \"a\"\n")}}}, "", "/x/y/pack.toml: unknown key idd"},
		{Pack{Name: "/x/y", FS: fstest.MapFS{"pack.toml": {Data: []byte("id = \n")}}}, "", "/x/y/pack.toml:1:"},
	} {
		got, err := c.pack.Identity()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.pack.Name, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.pack.Name, got, err, c.want)
		}
	}
}
