package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// engine.program_cache and program_cache_size (docs/program-cache.md).
func TestProgramCacheKeys(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		src, cache string
		size       int64
		err        string
	}{
		{"", "", 0, ""},
		{"program_cache = true", "", 0, ""},
		{"program_cache = false", "off", 0, ""},
		{`program_cache = "cache/p"`, filepath.Join(dir, "cache", "p"), 0, ""},
		{`program_cache = ""`, "", 0, "engine.program_cache: want true, false or a folder"},
		{"program_cache = 1", "", 0, "engine.program_cache: want true, false or a folder"},
		{`program_cache_size = "8MiB"`, "", 8 << 20, ""},
		{"program_cache_size = 2097152", "", 2 << 20, ""},
		{`program_cache_size = "1KiB"`, "", 0, "engine.program_cache_size: want a size like"},
		{`program_cache_size = "lots"`, "", 0, "engine.program_cache_size: want a size like"},
	} {
		cfg, err := Parse(filepath.Join(dir, "attune.toml"), []byte("[engine]\n"+c.src+"\n"))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.src, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if cfg.Engine.ProgramCache != c.cache || cfg.Engine.ProgramCacheSize != c.size {
			t.Errorf("%s: cache %q size %d, want %q %d", c.src, cfg.Engine.ProgramCache, cfg.Engine.ProgramCacheSize, c.cache, c.size)
		}
	}
}
