package config

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// RepoProject is the project of a configuration that names none
// (engine.project unset), derived from the repository its folder is in so
// that two repositories never share owners by default, and every clone of
// one repository shares them: the repository's origin remote, normalized
// ("github.com/acme/web" for git@github.com:acme/web.git and
// https://github.com/acme/web), when the folder is in a git work tree with
// one; else the name of the work tree's root (or of the folder) and a hash
// of its path ("web-1a2b3c4d"), which differs between checkouts.
func RepoProject(dir string) string {
	root := dir
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			if u := originURL(filepath.Join(d, ".git")); u != "" {
				return normalizeRemote(u)
			}
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Base(root) + "-" + hex.EncodeToString(sum[:4])
}

// originURL is remote "origin"'s url in the git config of gitPath (a .git
// folder, or a .git file naming one: a worktree or submodule).
func originURL(gitPath string) string {
	if st, err := os.Stat(gitPath); err == nil && !st.IsDir() {
		data, err := os.ReadFile(gitPath)
		if err != nil {
			return ""
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return ""
		}
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(gitPath), target)
		}
		if common, err := os.ReadFile(filepath.Join(target, "commondir")); err == nil {
			c := strings.TrimSpace(string(common))
			if !filepath.IsAbs(c) {
				c = filepath.Join(target, c)
			}
			target = c
		}
		gitPath = target
	}
	f, err := os.Open(filepath.Join(gitPath, "config"))
	if err != nil {
		return ""
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = strings.ReplaceAll(line, " ", "") == `[remote"origin"]`
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in && ok && strings.TrimSpace(k) == "url" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// normalizeRemote drops a remote URL's scheme, user and .git suffix.
func normalizeRemote(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	} else if host, path, ok := strings.Cut(u, ":"); ok && !strings.Contains(host, "/") {
		u = host + "/" + path // scp-like: git@host:owner/repo
	}
	if _, rest, ok := strings.Cut(u, "@"); ok && !strings.Contains(u[:strings.Index(u, "@")], "/") {
		u = rest
	}
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	return u
}
