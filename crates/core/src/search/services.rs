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
    "subreddit",
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

/// The services `query` names, as written (lowercased), in order, each
/// once: whitespace-separated words that are a listed name once the
/// punctuation around them (and a possessive `'s`) is taken off, unless
/// [`NOT_THE_SYSTEM`] comes before them, or "for" and a possessive.
pub(crate) fn named_services(query: &str) -> Vec<String> {
    let mut named: Vec<String> = Vec::new();
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
        if plain
            && SERVICES.binary_search(&lower.as_str()).is_ok()
            && !other
            && !named.contains(&lower)
        {
            named.push(lower.clone());
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
