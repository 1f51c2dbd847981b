package engine

import (
	"errors"
	"os"
	"path/filepath"

	lua "github.com/attune-dev/attune/internal/lua"
	"github.com/attune-dev/attune/internal/progcache"
)

// The program cache (docs/program-cache.md): compiled programs kept on
// disk between processes, keyed by the pinned source's sha256, so a
// process that loads a pin another has loaded reads its programs' protos
// back instead of lowering and compiling them. engine.program_cache or
// ATTUNE_NO_PROGRAM_CACHE=1 turns it off.

// NoProgramCacheEnv, set to anything but "" or "0", turns the program
// cache off.
const NoProgramCacheEnv = "ATTUNE_NO_PROGRAM_CACHE"

// programCache is the engine's program cache, nil when off. Nothing
// touches the disk here: the first load does.
func (e *Engine) programCache() *progcache.Cache {
	if v := os.Getenv(NoProgramCacheEnv); v != "" && v != "0" {
		return nil
	}
	dir := e.cfg.Engine.ProgramCache
	if dir == "off" {
		return nil
	}
	user, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(user) {
		return nil // no place for the key: no cache
	}
	if dir == "" {
		dir = filepath.Join(user, "attune", "programs")
		if s, ok := e.st.(interface{ Path() string }); ok && s.Path() != "" {
			dir = filepath.Join(filepath.Dir(s.Path()), "cache", "programs")
		}
	}
	return progcache.New(progcache.Options{
		Dir:      dir,
		KeyFile:  filepath.Join(user, "attune", "program-cache.key"),
		MaxBytes: e.cfg.Engine.ProgramCacheSize,
		Build:    progcache.BuildID(Version),
	})
}

// ProgramCacheDir is the folder of the engine's program cache, "" when
// the cache is off.
func (e *Engine) ProgramCacheDir() string {
	if e.progs == nil {
		return ""
	}
	return e.progs.Dir()
}

// cachedProto is the cached proto of a pinned source, nil on a miss (a
// refused entry is noted and removed).
func (e *Engine) cachedProto(file, sha string, src []byte) *lua.FunctionProto {
	if e.progs == nil {
		return nil
	}
	p, err := e.progs.Get(file, sha, src)
	switch {
	case err == nil:
		return p
	case errors.Is(err, progcache.ErrInvalid):
		e.log.Warn("program cache: an entry was refused and is compiled again", "file", file, "err", err)
	case errors.Is(err, progcache.ErrOff):
		e.noteCacheOff()
	}
	return nil
}

// keepProto stores a proto just compiled.
func (e *Engine) keepProto(file, sha string, src []byte, p *lua.FunctionProto) {
	if e.progs == nil {
		return
	}
	if err := e.progs.Put(file, sha, src, p); err != nil && !errors.Is(err, progcache.ErrOff) {
		e.log.Info("program cache: not stored", "file", file, "err", err)
	}
}

func (e *Engine) noteCacheOff() {
	e.cacheOffOnce.Do(func() {
		err := e.progs.Err()
		if errors.Is(err, progcache.ErrUnsafe) {
			e.log.Warn("program cache off: programs are compiled from source", "err", err)
		} else {
			e.log.Info("program cache off: programs are compiled from source", "err", err)
		}
	})
}
