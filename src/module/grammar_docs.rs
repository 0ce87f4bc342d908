//! Each kind's grammar and its docs agree, argument by argument.
//!
//! A kind's grammar is code (`Kind::grammar`, over `args::Cursor`); its
//! docs are data (`Kind::DOCS`, and RL.ALL's spec forms made from them,
//! `all_args::docs`). These tests walk the documented arguments of every
//! kind's command, of every RL.ALL spec form and of every RL.PEEK form,
//! and check each against what that command's parser does with it: every positional is required and named as
//! documented, every documented keyword is accepted where the docs put it,
//! with a value of its type or none, at most once unless documented
//! `multiple`, one-ofs exclude each other; and every keyword the parser
//! accepts (any word the parsers' source spells as a keyword, and every
//! token any command documents) is documented.

use std::collections::BTreeSet;

use super::args::ArgError;
use super::command_info::{Arg, ArgType, Info};
use super::commands::{all_args, peek};
use super::kinds::{self, EachKind, Kind};

/// Where a walk is: a kind's own command, its spec in RL.ALL, or its
/// form in RL.PEEK.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Command,
    Spec,
    Peek,
}

fn text(c: &'static std::ffi::CStr) -> &'static str {
    c.to_str().expect("docs are ASCII")
}

/// A value the parser takes for an argument of this type and name.
fn sample(arg: &Arg) -> &'static str {
    match (arg.kind(), arg.name().to_bytes()) {
        (ArgType::Integer, _) => "1000",
        (ArgType::String, b"period") => "DAY",
        (ArgType::String, b"zone") => "UTC",
        (ArgType::String, _) => "a",
        (kind, _) => panic!("no sample for a {kind:?}"),
    }
}

/// A keyword option's value, small enough for every range (COST, REFUND,
/// BURST, MAXWAIT, WAIT).
fn option_sample(arg: &Arg) -> &'static str {
    match arg.kind() {
        ArgType::Integer => "1",
        _ => sample(arg),
    }
}

/// One documented keyword option: its token, and its value's doc (`None`:
/// a pure token), and the one-of it belongs to (its alternatives' tokens).
struct Keyword {
    token: &'static str,
    value: Option<Arg>,
    multiple: bool,
    alternatives: Vec<&'static str>,
}

/// A command's (or spec form's) documented arguments, split as the
/// grammar reads them: the required positionals, then keyword options.
struct Documented {
    positionals: Vec<Arg>,
    keywords: Vec<Keyword>,
}

fn keyword(a: &Arg, alternatives: Vec<&'static str>) -> Keyword {
    let token = text(a.keyword().unwrap_or_else(|| panic!("option {:?} has no token", a.name())));
    let value = (a.kind() != ArgType::PureToken).then_some(*a);
    Keyword { token, value, multiple: a.is_multiple(), alternatives }
}

/// Splits `args` (after the key): positionals first, each required and
/// without a token; then options, each optional, a token or a one-of of
/// tokens. Options whose token is in `except` are left out.
fn documented(what: &str, args: &[Arg], except: &[&str]) -> Documented {
    let mut positionals = Vec::new();
    let mut keywords = Vec::new();
    for a in args {
        let is_option = a.keyword().is_some() || a.kind() == ArgType::OneOf;
        if !is_option {
            assert!(keywords.is_empty(), "{what}: positional {:?} after an option", a.name());
            assert!(!a.is_optional() && !a.is_multiple(), "{what}: positional {:?} is optional or multiple", a.name());
            assert!(matches!(a.kind(), ArgType::Integer | ArgType::String), "{what}: {:?}", a.name());
            positionals.push(*a);
            continue;
        }
        assert!(a.is_optional(), "{what}: option {:?} is not documented optional", a.name());
        let kept = |a: &&Arg| a.keyword().is_some_and(|t| !except.contains(&text(t)));
        if a.kind() == ArgType::OneOf {
            let tokens: Vec<&'static str> =
                a.subargs().iter().filter(kept).map(|s| text(s.keyword().expect("a one-of of tokens"))).collect();
            for s in a.subargs().iter().filter(kept) {
                let others = tokens.iter().filter(|t| **t != text(s.keyword().unwrap())).copied().collect();
                keywords.push(keyword(s, others));
            }
        } else if kept(&a) {
            keywords.push(keyword(a, Vec::new()));
        }
    }
    Documented { positionals, keywords }
}

/// Every token any command documents, at any depth.
fn tokens_of(args: &[Arg], out: &mut BTreeSet<String>) {
    for a in args {
        if let Some(t) = a.keyword() {
            out.insert(text(t).to_string());
        }
        tokens_of(a.subargs(), out);
    }
}

/// Every word the parsers' source spells as a keyword: a string literal
/// of capitals (`b"BURST"`, `Some("TZ")`), so a keyword added to a parser
/// is a candidate here without being added to any list.
fn source_keywords() -> BTreeSet<String> {
    let sources = [include_str!("args.rs"), include_str!("kinds.rs"), include_str!("commands/all_args.rs")];
    let mut words = BTreeSet::new();
    for source in sources {
        // Every stretch between two quotes: the literals and the code
        // between them; only a literal is all capitals.
        for piece in source.split('"') {
            if piece.len() >= 2 && piece.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                words.insert(piece.to_string());
            }
        }
    }
    words
}

/// Every candidate keyword: what the source spells and every documented token.
fn candidates() -> BTreeSet<String> {
    let mut all = source_keywords();
    struct Tokens<'a>(&'a mut BTreeSet<String>);
    impl EachKind for Tokens<'_> {
        fn kind<K: Kind>(&mut self) {
            tokens_of(K::DOCS.args, self.0);
        }
    }
    kinds::each(&mut Tokens(&mut all));
    for c in super::commands::TABLE {
        tokens_of(c.docs.get().args, &mut all);
        for sub in c.subcommands {
            tokens_of(sub.docs.get().args, &mut all);
        }
    }
    all
}

/// Parses a kind's command `RL.X key <words>`, the spec `RL.ALL 1 key
/// KEYWORD <words>` or `RL.PEEK KEYWORD key <words>`, as the server's
/// arguments would be, with the parser the command uses.
fn parse<K: Kind>(form: Form, words: &[&str]) -> Result<(), ArgError> {
    let before: Vec<String> = match form {
        Form::Command => vec![text(K::COMMAND).into(), "key".into()],
        Form::Spec => vec!["RL.ALL".into(), "1".into(), "key".into(), K::KEYWORD.into()],
        Form::Peek => vec!["RL.PEEK".into(), K::KEYWORD.into(), "key".into()],
    };
    let all: Vec<String> = before.into_iter().chain(words.iter().map(|w| w.to_string())).collect();
    let arg = |i: usize| all[i].as_bytes();
    match form {
        Form::Command => K::parse_command_from(all.len(), arg).map(|_| ()),
        Form::Spec => all_args::all_from(all.len(), arg).map(|_| ()),
        Form::Peek => peek::parse_from::<K>(all.len(), arg).map(|_| ()),
    }
}

/// The error's text (in RL.ALL, "(spec 1)" follows it).
fn error<K: Kind>(form: Form, words: &[&str]) -> String {
    match parse::<K>(form, words) {
        Ok(()) => panic!("{} {form:?} {words:?} is accepted", K::KEYWORD),
        Err(e) => e.to_string(),
    }
}

/// Walks `docs` (a kind's arguments after the key, in `form`, but those
/// whose token is in `except`) against the kind's grammar. `outer`: the
/// tokens documented around it (RL.ALL's own MAXWAIT and PEEK), which the
/// parser may accept after the spec.
fn walk<K: Kind>(form: Form, docs: &[Arg], except: &[&str], outer: &BTreeSet<String>) {
    let what = format!("{} ({form:?})", K::KEYWORD);
    let d = documented(&what, docs, except);
    let base: Vec<&str> = d.positionals.iter().map(sample).collect();
    assert_eq!(parse::<K>(form, &base), Ok(()), "{what}: {base:?}");

    // The positionals: as many as the grammar requires, each named as
    // documented when it is wrong, none optional.
    assert_eq!(d.positionals.len(), K::POSITIONALS, "{what}: documented positionals");
    for (i, p) in d.positionals.iter().enumerate() {
        let mut words = base.clone();
        words[i] = "x";
        let e = error::<K>(form, &words);
        let name = text(p.name());
        assert!(e.starts_with(&format!("ERR {name} ")), "{what}: a bad {name} is refused as {e:?}");
        if p.kind() == ArgType::Integer {
            assert!(e.contains("not an integer"), "{what}: {name} is an integer, yet {e:?}");
        }
    }
    let short = &base[..base.len() - 1];
    assert!(parse::<K>(form, short).is_err(), "{what}: the last positional is required");

    // Every documented keyword: accepted (in any case) with a value of its
    // type, or with none; once unless `multiple`; not with its alternatives.
    let documented_tokens: BTreeSet<&str> = d.keywords.iter().map(|k| k.token).collect();
    for k in &d.keywords {
        let t = k.token;
        let lower = t.to_ascii_lowercase();
        for spelled in [t, lower.as_str()] {
            let mut words: Vec<&str> = base.clone();
            with(&mut words, spelled, k.value.as_ref());
            assert_eq!(parse::<K>(form, &words), Ok(()), "{what}: documented {words:?}");
        }
        let mut once = base.clone();
        with(&mut once, t, k.value.as_ref());
        let mut twice = once.clone();
        with(&mut twice, t, k.value.as_ref());
        assert_eq!(parse::<K>(form, &twice).is_ok(), k.multiple, "{what}: {t} twice; multiple: {}", k.multiple);
        match &k.value {
            Some(v) => {
                // It takes a value: without one it says so.
                let mut bare = base.clone();
                bare.push(t);
                assert_eq!(parse::<K>(form, &bare), Err(missing(form, t)), "{what}: {t} without its value");
                let name = text(v.name());
                if v.kind() == ArgType::Integer {
                    let mut bad = base.clone();
                    bad.extend([t, "x"]);
                    let e = error::<K>(form, &bad);
                    assert!(
                        e.contains("not an integer") && (e.contains(t) || e.contains(name)),
                        "{what}: {t} takes an integer ({name}), yet {e:?}"
                    );
                }
                // Its value is its value even when it spells a keyword
                // (in RL.ALL, where a spec ends is found before it is parsed).
                let mut keyword_value = base.clone();
                keyword_value.extend([t, "PEEK"]);
                match v.kind() {
                    ArgType::Integer => {
                        let e = error::<K>(form, &keyword_value);
                        assert!(e.contains("not an integer"), "{what}: {t} PEEK is {e:?}");
                    }
                    _ if t == "TZ" => {
                        let e = error::<K>(form, &keyword_value);
                        assert!(e.starts_with("ERR TZ: unknown time zone"), "{what}: {t} PEEK is {e:?}");
                    }
                    _ => assert_eq!(parse::<K>(form, &keyword_value), Ok(()), "{what}: {t} PEEK"),
                }
            }
            None => {
                // A pure t takes no value: a word after it is another option.
                let mut valued = base.clone();
                valued.extend([t, "1"]);
                assert!(parse::<K>(form, &valued).is_err(), "{what}: {t} takes no value");
            }
        }
        for &other in &k.alternatives {
            let alt = d.keywords.iter().find(|k| k.token == other).unwrap();
            let mut both = once.clone();
            with(&mut both, other, alt.value.as_ref());
            assert!(parse::<K>(form, &both).is_err(), "{what}: {t} with {other}, which exclude each other");
        }
    }

    // Every keyword the parser accepts here is documented here (or around
    // it): tried bare and with a value of each type.
    for w in candidates() {
        if documented_tokens.contains(w.as_str()) || outer.contains(&w) {
            continue;
        }
        for value in [None, Some("1"), Some("1000"), Some("UTC"), Some("a")] {
            let mut words: Vec<&str> = base.clone();
            words.push(&w);
            words.extend(value);
            assert!(
                parse::<K>(form, &words).is_err(),
                "{what}: the parser accepts {words:?}, but {w} is not documented for it"
            );
        }
    }
}

/// `token`, and its value if it takes one.
fn with<'a>(words: &mut Vec<&'a str>, token: &'a str, value: Option<&Arg>) {
    words.push(token);
    if let Some(v) = value {
        words.push(option_sample(v));
    }
}

/// What the parser says of an option without its value.
fn missing(form: Form, token: &'static str) -> ArgError {
    let e = ArgError::MissingValue(token);
    match form {
        Form::Command | Form::Peek => e,
        Form::Spec => ArgError::InSpec(1, Box::new(e)),
    }
}

/// The arguments after the key of a kind's own command.
fn after_key<K: Kind>() -> &'static [Arg] {
    let args = K::DOCS.args;
    assert_eq!(args.first().map(Arg::kind), Some(ArgType::Key), "{}: the key comes first", K::KEYWORD);
    &args[1..]
}

/// RL.ALL's spec form for `K`, and RL.ALL's own tokens.
fn spec_form<K: Kind>(all: &Info) -> (&'static [Arg], BTreeSet<String>) {
    let mut outer = BTreeSet::new();
    tokens_of(&all.args.iter().filter(|a| a.kind() != ArgType::OneOf).copied().collect::<Vec<_>>(), &mut outer);
    let specs = all.args.iter().find(|a| a.kind() == ArgType::OneOf).expect("RL.ALL's specs");
    let form = specs
        .subargs()
        .iter()
        .find(|f| f.keyword().map(text) == Some(K::KEYWORD))
        .unwrap_or_else(|| panic!("RL.ALL documents no {} spec", K::KEYWORD));
    assert_eq!(form.kind(), ArgType::Block);
    (form.subargs(), outer)
}

struct Walk;
impl EachKind for Walk {
    fn kind<K: Kind>(&mut self) {
        walk::<K>(Form::Command, after_key::<K>(), &[], &BTreeSet::new());
        let (form, outer) = spec_form::<K>(all_args::docs());
        walk::<K>(Form::Spec, form, &[], &outer);
        // RL.PEEK takes the kind's arguments "as its command takes them,
        // without PEEK, REFUND or WAIT" (its docs, as
        // docs/commands/RL.PEEK.md says): those three are refused.
        walk::<K>(Form::Peek, after_key::<K>(), &["PEEK", "REFUND", "WAIT"], &BTreeSet::new());
    }
}

#[test]
fn every_kind_s_grammar_and_docs_agree_argument_by_argument() {
    kinds::each(&mut Walk);
}

#[test]
fn rl_all_s_own_options_are_documented_and_accepted() {
    let all = all_args::docs();
    let names: Vec<&str> = all.args.iter().map(|a| text(a.name())).collect();
    assert_eq!(names, ["numkeys", "key", "spec", "ms", "peek"]);
    let spec = "RL.ALL 2 a b GCRA 10 1000 TOKENBUCKET 5 1 1000";
    for tail in ["", " MAXWAIT 10", " PEEK", " maxwait 0 peek"] {
        let line = format!("{spec}{tail}");
        let words: Vec<&str> = line.split(' ').collect();
        assert!(all_args::all_from(words.len(), |i| words[i].as_bytes()).is_ok(), "{line}");
    }
}

#[test]
fn the_candidate_keywords_include_every_option_the_parsers_spell() {
    let words = source_keywords();
    for w in ["BURST", "COST", "REFUND", "MAXWAIT", "WAIT", "PEEK", "TZ", "ID"] {
        assert!(words.contains(w), "{w} in {words:?}");
    }
}

#[test]
fn cl_throttle_s_arguments_are_its_documented_positionals() {
    use super::commands::throttle::{self, Throttle};
    let docs = throttle::COMMAND.docs.get();
    let args = &docs.args[1..];
    let names: Vec<&str> = args.iter().map(|a| text(a.name())).collect();
    assert_eq!(names, ["max_burst", "count", "period", "quantity"]);
    let parse = |words: &[&str]| {
        let all: Vec<&str> = ["CL.THROTTLE", "key"].into_iter().chain(words.iter().copied()).collect();
        Throttle::parse_from(all.len(), |i| all[i].as_bytes()).map(|_| ())
    };
    let base = ["1", "10", "60", "1"];
    assert_eq!(parse(&base), Ok(()));
    for (i, a) in args.iter().enumerate() {
        assert_eq!(a.kind(), ArgType::Integer);
        assert!(a.keyword().is_none() && !a.is_multiple());
        // Only the last is optional: without it the call is whole.
        assert_eq!(a.is_optional(), i == args.len() - 1, "{names:?}");
        let mut words = base;
        words[i] = "x";
        assert_eq!(parse(&words).map_err(|e| e.to_string()), Err(format!("ERR {} is not an integer", names[i])));
    }
    assert_eq!(parse(&base[..3]), Ok(()));
    assert_eq!(parse(&base[..2]), Err(ArgError::WrongArity));
    assert_eq!(parse(&["1", "10", "60", "1", "1"]), Err(ArgError::WrongArity));
    assert_eq!(docs.arity, -(2 + base.len() as i32 - 1));
}
