//! Services a query may name that no catalog searched knows.
//!
//! "Post a message in the #support slack channel" asks for Slack. When no
//! connector here serves Slack, a tool that posts messages somewhere else
//! is no answer, however many words it shares. A query that names a
//! well-known service that no searched catalog mentions anywhere (tool
//! names, titles, descriptions, connector ids and descriptions) is held to
//! a stricter bar: its answers must cover half its weight by themselves
//! (two shared words, or a name spelled out, are not enough), and when
//! nothing does, the no-match says which service is missing.
//!
//! Only distinctive product names are listed: words with a common English
//! sense (`notion`, `linear`, `box`, `square`, `zoom`, `teams`, `close`,
//! `front`, `segment`, …) are not, nor are technologies that many services
//! carry (`postgres`, `kafka`, `kubernetes`). A name counts only as a word
//! of its own: `STRIPE_KEY` or `jo@gmail.com` names no service.

/// Well-known services, lowercased, sorted for binary search.
const SERVICES: &[&str] = &[
    "1password",
    "adyen",
    "airbnb",
    "airflow",
    "airtable",
    "alexa",
    "amazon",
    "anthropic",
    "asana",
    "attio",
    "auth0",
    "aws",
    "azure",
    "bamboohr",
    "basecamp",
    "behance",
    "bigcommerce",
    "bigquery",
    "bitbucket",
    "bitwarden",
    "bluesky",
    "braintree",
    "brex",
    "bugsnag",
    "buildkite",
    "calendly",
    "canva",
    "chargebee",
    "chatgpt",
    "circleci",
    "clickup",
    "cloudflare",
    "codecov",
    "confluence",
    "contentful",
    "databricks",
    "datadog",
    "dbt",
    "deel",
    "dependabot",
    "digitalocean",
    "discord",
    "docusign",
    "doordash",
    "dribbble",
    "dropbox",
    "duolingo",
    "ebay",
    "etsy",
    "eventbrite",
    "evernote",
    "expedia",
    "expensify",
    "facebook",
    "fastly",
    "figma",
    "firebase",
    "fitbit",
    "freshbooks",
    "freshdesk",
    "freshsales",
    "fullstory",
    "garmin",
    "gitea",
    "github",
    "gitlab",
    "gmail",
    "gorgias",
    "grafana",
    "grubhub",
    "gumroad",
    "gusto",
    "hellosign",
    "heroku",
    "hetzner",
    "hotjar",
    "hubspot",
    "ifttt",
    "instacart",
    "instagram",
    "invision",
    "jenkins",
    "jira",
    "jotform",
    "kibana",
    "klarna",
    "kustomer",
    "lastpass",
    "launchdarkly",
    "lemonsqueezy",
    "linkedin",
    "linode",
    "logrocket",
    "lyft",
    "magento",
    "mailchimp",
    "mailgun",
    "mastodon",
    "metabase",
    "midjourney",
    "miro",
    "mixpanel",
    "netflix",
    "netlify",
    "netsuite",
    "obsidian",
    "okta",
    "onedrive",
    "onelogin",
    "onenote",
    "openai",
    "opsgenie",
    "optimizely",
    "pagerduty",
    "pandadoc",
    "paypal",
    "peloton",
    "pinterest",
    "pipedrive",
    "plaid",
    "planetscale",
    "posthog",
    "quickbooks",
    "quip",
    "recurly",
    "reddit",
    "redshift",
    "ringcentral",
    "rollbar",
    "salesforce",
    "semgrep",
    "sendgrid",
    "sentry",
    "shopify",
    "slack",
    "smartsheet",
    "snapchat",
    "snyk",
    "sonarqube",
    "sonos",
    "soundcloud",
    "sourcegraph",
    "splunk",
    "spotify",
    "squarespace",
    "statuspage",
    "strapi",
    "strava",
    "stripe",
    "substack",
    "supabase",
    "surveymonkey",
    "teamcity",
    "telegram",
    "ticktick",
    "tiktok",
    "todoist",
    "trello",
    "tripadvisor",
    "twilio",
    "twitch",
    "twitter",
    "typeform",
    "uber",
    "vercel",
    "vimeo",
    "vultr",
    "webex",
    "webflow",
    "whatsapp",
    "wix",
    "woocommerce",
    "wordpress",
    "wrike",
    "xero",
    "yelp",
    "youtube",
    "zapier",
    "zendesk",
    "zoho",
];

/// Words only one service uses for its own things, and that service:
/// "submit a post to a subreddit" asks for Reddit. Lowercased, sorted.
const SERVICE_WORDS: &[(&str, &str)] = &[
    ("dyno", "heroku"),
    ("dynos", "heroku"),
    ("ec2", "aws"),
    ("jql", "jira"),
    ("retweet", "twitter"),
    ("retweets", "twitter"),
    ("soql", "salesforce"),
    ("subreddit", "reddit"),
    ("subreddits", "reddit"),
    ("tweet", "twitter"),
    ("tweets", "twitter"),
];

/// The service `word` (lowercase) names: itself when it is a listed
/// name, else the service whose word it is.
fn service_of(word: &str) -> Option<&'static str> {
    if let Ok(i) = SERVICES.binary_search(&word) {
        return Some(SERVICES[i]);
    }
    SERVICE_WORDS
        .binary_search_by(|(w, _)| (*w).cmp(word))
        .ok()
        .map(|i| SERVICE_WORDS[i].1)
}

/// Words before a name that make it where someone works or what is
/// talked about ("designers at figma"), not the system to act in.
const NOT_THE_SYSTEM: &[&str] = &["at", "about"];

/// Possessives: after "for" they make a name whom something is for ("a
/// card for our figma subscription"); "search for slack messages" and,
/// after a verb of searching, "look for our jira tickets" still name the
/// system.
const POSSESSIVES: &[&str] = &["our", "my", "your", "their", "his", "her", "its"];

/// Verbs whose "for" introduces what is looked for.
const SEARCH_VERBS: &[&str] = &["search", "look", "ask", "check", "find", "hunt", "scan"];

/// Words that may stand between such a word and the name.
const DETERMINERS: &[&str] = &["the", "a", "an", "this", "that"];

/// The services of [`service_mentions`], each once, for tests.
#[cfg(test)]
pub(crate) fn named_services(query: &str) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
    for m in service_mentions(query) {
        if !named.iter().any(|n| n == m.service) {
            named.push(m.service.to_owned());
        }
    }
    named
}

/// The services of `mentions` (a query's, from [`service_mentions`]) that
/// no catalog searched serves: neither the service's name nor any of the
/// query's words for it ("subreddit", "tweet") is `known`, whatever the
/// service is called where it is served. In query order, each once.
pub(crate) fn missing_services(mentions: &[Mention], known: impl Fn(&str) -> bool) -> Vec<String> {
    let mut missing: Vec<String> = Vec::new();
    for m in mentions {
        let served = known(m.service)
            || mentions
                .iter()
                .any(|o| o.service == m.service && known(&o.word));
        if !served && !missing.iter().any(|s| s == m.service) {
            missing.push(m.service.to_owned());
        }
    }
    missing
}

/// A service a query names where it may be the system to act in, and the
/// word that names it as written ("subreddit" for Reddit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mention {
    pub service: &'static str,
    pub word: String,
}

/// The services `query` names, in order, once per word naming each:
/// whitespace-separated words that are a listed name (or one of
/// [`SERVICE_WORDS`]) once the punctuation around them (and a possessive
/// `'s`) is taken off, unless [`NOT_THE_SYSTEM`] comes before them, or
/// "for" and a possessive.
pub(crate) fn service_mentions(query: &str) -> Vec<Mention> {
    let mut named: Vec<Mention> = Vec::new();
    // The last word before the current one that is not a determiner or
    // a possessive, and whether a possessive came after it.
    let mut before = String::new();
    let mut possessed = false;
    // The word before `before`: a "for" after a verb of searching.
    let mut earlier = String::new();
    for token in query.split_whitespace() {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let word = word
            .strip_suffix("'s")
            .or_else(|| word.strip_suffix("’s"))
            .unwrap_or(word);
        let lower = word.to_ascii_lowercase();
        let plain = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric());
        let other = NOT_THE_SYSTEM.contains(&before.as_str())
            || (before == "for" && possessed && !SEARCH_VERBS.contains(&earlier.as_str()));
        // Every word naming a service is kept (once), so that a catalog
        // knowing any of them serves it ("retweet the tweet" where a
        // catalog has `post_tweet`).
        if let Some(service) = service_of(&lower).filter(|_| plain && !other)
            && !named
                .iter()
                .any(|m| m.service == service && m.word == lower)
        {
            named.push(Mention {
                service,
                word: lower.clone(),
            });
        }
        if POSSESSIVES.contains(&lower.as_str()) {
            possessed = true;
        } else if !DETERMINERS.contains(&lower.as_str()) {
            earlier = std::mem::replace(&mut before, lower);
            possessed = false;
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_lowercase_and_unique() {
        for pair in SERVICES.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        for s in SERVICES {
            assert_eq!(s.to_ascii_lowercase(), *s);
        }
    }

    #[test]
    fn a_service_counts_as_a_word_of_its_own() {
        assert_eq!(
            named_services("post a message in the #support Slack channel"),
            ["slack"]
        );
        assert_eq!(
            named_services("PagerDuty's on-call, then (github)."),
            ["pagerduty", "github"]
        );
        assert_eq!(named_services("slack and Slack"), ["slack"]);
        // Whom something is for, or where someone works, is not the
        // system to act in.
        assert_eq!(
            named_services("a virtual card for our Figma subscription"),
            Vec::<String>::new()
        );
        assert_eq!(named_services("designers at figma"), Vec::<String>::new());
        assert_eq!(named_services("post to the slack channel"), ["slack"]);
        // "for" alone is how a search is asked.
        assert_eq!(named_services("search for slack messages"), ["slack"]);
        assert_eq!(named_services("look for the jira ticket"), ["jira"]);
        assert_eq!(named_services("look for our jira tickets"), ["jira"]);
        // Inside identifiers, addresses and paths it names nothing.
        for query in [
            "set the STRIPE_KEY variable",
            "look up priya@gmail.com",
            "open github.com/acme/api",
            "the slack-bot user",
        ] {
            assert_eq!(named_services(query), Vec::<String>::new(), "{query}");
        }
    }

    #[test]
    fn a_word_only_one_service_uses_names_that_service() {
        assert_eq!(
            service_mentions("submit a post to the rust subreddit"),
            [Mention {
                service: "reddit",
                word: "subreddit".into()
            }]
        );
        assert_eq!(named_services("Tweet the release notes"), ["twitter"]);
        // Once per service, whichever word names it.
        assert_eq!(
            named_services("retweet it, then tweet on Twitter"),
            ["twitter"]
        );
        assert_eq!(named_services("reddit's subreddits"), ["reddit"]);
        assert_eq!(
            service_mentions("retweet the tweet"),
            [
                Mention {
                    service: "twitter",
                    word: "retweet".into()
                },
                Mention {
                    service: "twitter",
                    word: "tweet".into()
                }
            ]
        );
        // Ordinary words name nothing: the gist of a thread is no GitHub
        // gist.
        assert!(named_services("give me the gist of this thread").is_empty());
    }

    #[test]
    fn a_service_is_served_when_its_name_or_any_word_for_it_is_known() {
        let knows = |words: &'static [&'static str]| move |w: &str| words.contains(&w);
        assert_eq!(
            missing_services(&service_mentions("retweet the tweet"), knows(&[])),
            ["twitter"]
        );
        assert!(
            missing_services(&service_mentions("retweet the tweet"), knows(&["tweet"])).is_empty()
        );
        assert!(
            missing_services(&service_mentions("retweet the tweet"), knows(&["twitter"]))
                .is_empty()
        );
        assert_eq!(
            missing_services(
                &service_mentions("tweet it in the slack channel"),
                knows(&["tweet"])
            ),
            ["slack"]
        );
    }

    #[test]
    fn the_service_words_are_sorted_lowercase_and_unique() {
        for pair in SERVICE_WORDS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{pair:?}");
        }
        for (word, service) in SERVICE_WORDS {
            assert_eq!(word.to_ascii_lowercase(), *word);
            assert!(SERVICES.binary_search(service).is_ok(), "{service}");
        }
    }

    #[test]
    fn any_text_gets_an_answer() {
        for (query, named) in [
            ("", &[][..]),
            ("   ", &[]),
            ("'s", &[]),
            ("— slack —", &["slack"]),
            ("🙂slack", &["slack"]),
            ("\u{0}slack", &["slack"]),
            // Full-width letters are not the name.
            ("ｓｌａｃｋ", &[]),
        ] {
            assert_eq!(named_services(query), named, "{query:?}");
        }
    }
}
