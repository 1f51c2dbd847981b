// Package scheme reads behavior programs written in attune's Scheme-style
// forms (NAME.scm) and lowers them to Lua 5.1 source for gopher-lua, so that
// a .scm program runs in a registry's Lua state exactly like a .lua program.
//
// # Reader, forms and positions
//
// [Read] turns source text into [Form] values: lists ( ), strings with
// escapes (\n \t \r \" \\ \a \b \0, \xHEX; for any character, and a
// backslash at the end of a line to join lines; a string may also span
// lines), integers and decimals (-12, 3.5, .5, 1e6), #t and #f (also #true
// and #false), symbols, keywords (:name), 'x for (quote x), and ; comments.
// Every form carries its [Pos]: file, line and column (1-based, counted in
// characters). Reader errors are [*Error] values whose text is
// "FILE:LINE:COL: message": an unclosed list is reported at its '(', a stray
// ')' at itself, an unterminated string at its opening quote, a bad escape
// at its backslash. Quasiquote, vectors, [ ] and { } are not part of the
// syntax and are reported as such.
//
// # The translator
//
// [Lower] (and [LowerFile], which `attune lower FILE.scm` prints) translates
// forms to Lua. One dispatch point compiles a form; the special forms live
// in one table from head symbol to lowering; every other list is a call of
// the function its head names. Misusing a special form is an [*Error]
// "FILE:LINE:COL: FORM: message" that says what to write instead. [Compile]
// lowers and compiles in one step, returning a read-only prototype to
// instantiate in each registry.
//
// Core forms: define, lambda, let (also named let), let*, if, cond (with
// else; a clause (TEST) yields the test's value), when, unless, begin, set!,
// and, or, not, quote. Data: (list ...) is a Lua table {...}, except that
// (list) and '() call the engine's list(), which returns an empty table
// marked as a list; (table :k v "s" w ...) is {k = v, s = w}; (get t k) is
// t[k]; (put! t k v) is t[k] = v and, used as a value, yields t.
// Operators: + - * / fold left, (- x) negates, (/ x) is 1/x, (+) is 0 and
// (*) is 1; = < > <= >= compare neighbours ((< a b c) is a < b and b < c)
// and = is Lua's == on any values; string-append is .. (no arguments: "").
// length, null?, map, filter and fold call runtime helpers (below);
// (fold f init xs) calls (f x acc) for each x in order.
//
// Truth is Lua's: #f and nil are false; 0, "" and the empty list are true.
// set! and define yield nil, as do if, when, unless and cond when no branch
// runs; (and) is #t and (or) is #f. The symbol nil is Lua's nil. A quoted
// symbol is its name as a string, a quoted list a list of its quoted items.
//
// # Naming
//
// A symbol becomes a Lua name by these rules:
//
//   - a/b and a.b are field b of a: define/tool is define.tool, call/method
//     is call.method, string.upper stays string.upper; a field that is not a
//     Lua identifier is indexed, t.end is t["end"]
//   - '-' becomes '_', '?' becomes _p and '!' becomes _x: task-id is
//     task_id, null? is null_p, reset! is reset_x
//   - other characters that a Lua name cannot hold are spelled out: '*' is
//     _star, '+' _plus, '<' _lt, '>' _gt, '=' _eq, '%' _pct, '&' _amp,
//     '$' _dollar, '^' _caret, '~' _tilde, '@' _at, '#' _hash, '|' _bar,
//     ':' _colon, '/' _slash, '.' _dot, '\' _bslash, and any other
//     character _uHEX (its code point in hex): a->b is a__gtb
//   - a name that starts with a digit gets a '_' in front, and a name that is
//     a Lua keyword gets a '_' after it: end is end_, function is function_
//
// Two different symbols that would become the same Lua name (x? and x-p)
// are an error. Keywords name table keys with the same character rules and
// no prefix or suffix: :post-fail is post_fail, :reentrant-depth is
// reentrant_depth, and a key that is not a Lua identifier is written
// ["1"] or ["end"]. A keyword used as a value is that key as a string.
//
// In a call, positional arguments keep their order and every :key value pair
// is gathered into one trailing options table:
//
//	(hook/tool "fs/*" :pre f :post-fail g)  =>  hook.tool("fs/*", {pre = f, post_fail = g})
//
// Names in argument position are ordinary expressions: write
// (define/reducer "tasks" ...) or (define/reducer 'tasks ...).
//
// # Expressions and statements
//
// Every form works both as a value and as a statement. The translator
// compiles each form for a destination: an expression, a statement whose
// value is dropped, a return (the last form of a lambda body is its value),
// or an assignment to a variable. Forms that Lua can only state (if, cond,
// when, unless, let, let*, begin with several forms) assign their value to a
// fresh temporary (_1, _2, ..., never a name the program uses) declared
// before the expression that needs it, as Fennel does; a statement that
// declares temporaries is wrapped in do ... end so they do not accumulate.
// When an argument needs statements, the arguments before it are saved in
// temporaries first, so arguments are evaluated left to right (the function
// a symbol names is looked up when the call is made). A call that ends an
// argument list or a list keeps one value, as (f) would in Scheme; a call in
// tail position is a Lua tail call, so loops by recursion run in constant
// stack (and the caller's frame does not appear in tracebacks).
//
// The names that define binds in a body (of lambda, let, let*, begin, when,
// unless, a cond clause, or the top level) are declared together at the
// start of that body, so functions defined in it can refer to each other in
// any order. At the top level they are locals declared on line 1; each
// registry has its own Lua state, and locals keep a program's names from
// replacing the engine's globals. A program with more than 150 top-level
// definitions uses globals of its state instead, as Lua allows 200 locals in
// a function. define anywhere else is an error.
//
// # Line alignment
//
// The Lua that Lower returns is line-aligned with the source: every chunk of
// generated code remembers the form it came from, and the chunks are joined
// so that each starts on its form's source line (indented to its column),
// or, when the output has already passed that line, on the current one.
// Statements that share a line are separated by ';', and a statement that
// starts with '(' always gets a ';' before it. The engine compiles the
// output with the .scm file's name as chunk name, so runtime errors and
// tracebacks read "tasks.scm:12: ..." and name the line of the form that
// threw. The output never has more lines than the source. Lower compiles
// nothing: the engine's one compiler (luabind.Compile) reports a program
// too large for Lua's limits as a luabind.SyntaxError at the .scm line.
//
// # Runtime helpers
//
// length, null?, map, filter and fold are small Lua functions (_length,
// _null_p, _map, _filter, _fold) that Lower emits as locals at the start of
// line 1, and only when the program uses them. They use only the base
// library and list(): map and filter build their results with list(), so an
// empty result is still a list. null? is true for nil and for a table with
// no entries. A helper reports misuse ("map: want a list, got nil") at the
// line of the form that called it. These forms may also be passed as values,
// as in (map length xs); the other special forms may not.
//
// # What lowered code needs
//
// Lowered code uses only Lua's base, string, table and math libraries and
// the engine's globals: the tables define, guard, hook, call, admit and
// validate, and the functions subscribe, require, notify, propose, refuse,
// retry, mark, unmark, config and list. list() must return a new, empty
// table marked as a list.
//
// All functions of this package are safe for concurrent use; the package
// holds no mutable state.
package scheme
