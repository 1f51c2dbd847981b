// Package config reads the host configuration of attune: one TOML file
// (by default attune.toml, R8.1) or the same schema held inline in a
// scenario file's [config] table.
//
// The concepts:
//
//   - [Config] is one loaded configuration: the [Engine] settings (the store,
//     the pack folders, the project, the callback time budget), the [Floor]
//     (the marks the default host floor refuses) and the bots by name.
//   - A [Bot] is a persona: its behaviors (an ordered list of program names,
//     the file stems of programs in the packs), its effect ceiling, its grants,
//     its retry budget and one free-form configuration table per program.
//   - A store spec names where state lives: "memory:", "sqlite:PATH" (or a
//     bare path to a .db file) or a "postgres://" URL; [ParseStore] reads one.
//   - A key path names a place in the file the way TOML writes it, with list
//     indexes counted from 1 (as schema paths count them):
//     bots.main.behaviors[1] is the first program. For an inline configuration the path
//     starts with the key that holds it (config.bots.main.ceiling).
//   - Every problem is an [*Error] with the file, the line when known and the
//     key path; several problems come back together as a [*List]. Loading
//     checks the structure (unknown keys, wrong types, bad values) and reports
//     every problem it finds, not only the first; [Config.Validate] adds the
//     checks that need the packs (a program that no pack holds, R8.2).
//
// The engine's own pack is not part of Engine.Packs: the engine appends it
// after the configured packs. Grants are not checked against methods here;
// the engine does that when it loads a bot's programs.
//
// A Config is immutable once loaded: nothing in this package changes it after
// [Load], [Parse] or [Decode] returns, and it is safe for concurrent reads.
// Callers must treat its slices and maps as read-only too; [Bot.ConfigFor]
// returns a copy of a program's table that may be changed freely.
package config
