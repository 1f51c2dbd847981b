package pin

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// PackFile is the file at a pack's root that declares its identity:
//
//	id = "acme-tasks"
//
// Owners belong to a program's name within its pack identity, never to the
// pack's path on disk: every checkout of a repository, at any path on any
// machine, that holds the same pack serves the same project and global
// owners.
const PackFile = "pack.toml"

// EnginePackID is the identity of the engine's own pack (behaviors/).
const EnginePackID = "attune"

// Identity returns the pack's identity: ID when set, else the id declared
// in the pack's pack.toml, else the base name of the pack's folder. It
// never depends on where the folder lies.
func (p Pack) Identity() (string, error) {
	if p.ID != "" {
		return p.ID, nil
	}
	if p.FS != nil {
		data, err := fs.ReadFile(p.FS, PackFile)
		switch {
		case err == nil:
			return parsePackFile(p.Name, data)
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("pack %s: %s: %w", p.Name, PackFile, err)
		}
	}
	return DefaultPackID(p.Name), nil
}

// DefaultPackID is the identity of a pack that declares none: the base
// name of its folder ("behaviors", the engine's own pack, is "attune").
func DefaultPackID(name string) string {
	if name == "behaviors" || name == "" {
		return EnginePackID
	}
	base := path.Base(filepath.ToSlash(filepath.Clean(name)))
	if base == "." || base == "/" {
		return name
	}
	return base
}

func parsePackFile(pack string, data []byte) (string, error) {
	var doc struct {
		ID *string `toml:"id"`
	}
	where := pack + "/" + PackFile
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("%s:%d:%d: %s", where, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return "", fmt.Errorf("%s: %w", where, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return "", fmt.Errorf("%s: unknown key %s (a pack file has only id = \"NAME\")", where, un[0].String())
	}
	if doc.ID == nil {
		return DefaultPackID(pack), nil
	}
	if err := checkPackID(*doc.ID); err != nil {
		return "", fmt.Errorf("%s: id: %v", where, err)
	}
	return *doc.ID, nil
}

func checkPackID(id string) error {
	if id == "" {
		return errors.New("empty; name the pack (id = \"team-tasks\")")
	}
	if len(id) > 200 {
		return errors.New("longer than 200 bytes")
	}
	if strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return fmt.Errorf("%q holds a space or a control character", id)
	}
	return nil
}
