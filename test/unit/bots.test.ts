import { isbot as isBot } from 'isbot';
import { describe, expect, it } from 'vitest';

/*
 * What the redirect relies on from the `isbot` list (a dependency, not our code): these agents are
 * redirected without being counted, and browsers, in-app browsers included, are counted. A new
 * version of the list that changes one of these answers fails here.
 */

describe('isbot: crawlers, link previews and HTTP libraries are not counted as visits', () => {
  it.each([
    ['Mastodon', 'Mastodon/4.2.0 (http.rb/5.1.1; +https://mastodon.social/)'],
    ['Bluesky', 'Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)'],
    [
      'MicrosoftPreview',
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/42.0.2311.135 Safari/537.36 Edge/12.10136 MicrosoftPreview/2.0 +https://aka.ms/MicrosoftPreview',
    ],
    [
      'Google-PageRenderer',
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)) Chrome/56.0.2924.87 Safari/537.36',
    ],
    ['curl', 'curl/8.5.0'],
    ['python-requests', 'python-requests/2.31.0'],
    ['Node.js fetch', 'node'],
    ['Slackbot', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'],
    ['Slackbot (plain)', 'Slackbot 1.0 (+https://api.slack.com/robots)'],
    ['facebookexternalhit', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
    ['Twitterbot', 'Twitterbot/1.0'],
    ['LinkedInBot', 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)'],
    ['Discordbot', 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)'],
    ['WhatsApp', 'WhatsApp/2.23.20.0 A'],
    ['WhatsApp (iOS)', 'WhatsApp/2.19.81 i'],
    ['TelegramBot', 'TelegramBot (like TwitterBot)'],
    ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
    [
      'Googlebot smartphone',
      'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    ],
    ['bingbot', 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)'],
    [
      'Applebot',
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
    ],
    ['Pinterest', 'Pinterest/0.2 (+https://www.pinterest.com/bot.html)'],
    ['a generic crawler', 'SomeCrawler/1.0 (compatible; crawler; +https://example.com)'],
  ])('%s is a bot', (_name, ua) => {
    expect(isBot(ua)).toBe(true);
  });

  it.each(['slackbot-linkexpanding 1.0', 'FACEBOOKEXTERNALHIT/1.1', 'twitterBOT/1.0'])(
    'matching ignores case: %j',
    (ua) => {
      expect(isBot(ua)).toBe(true);
    },
  );

  it.each([
    [
      'Chrome on Windows',
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    ],
    [
      'Safari on iPhone',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
    ],
    [
      'Safari on macOS',
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
    ],
    ['Firefox on Linux', 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0'],
    [
      'Edge on Windows',
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
    ],
    [
      'Chrome on Android',
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
    ],
    [
      'Samsung Internet',
      'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36',
    ],
    [
      'Opera',
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0',
    ],
    [
      'Instagram in-app browser',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 339.0.3.12.91',
    ],
    [
      'Facebook in-app browser',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.37.107;FBBV/620000000]',
    ],
  ])('%s is not a bot', (_name, ua) => {
    expect(isBot(ua)).toBe(false);
  });

  it('no user agent and an empty one are not bots (the visit is still counted)', () => {
    expect(isBot(undefined)).toBe(false);
    expect(isBot('')).toBe(false);
  });

  it('words merely containing "bot" are not bots', () => {
    expect(
      isBot('Mozilla/5.0 (Linux; Android 13; Robotics-Tab) AppleWebKit/537.36 Chrome/126.0 Safari/537.36'),
    ).toBe(false);
    expect(isBot('Mozilla/5.0 Bottlenose/2.1')).toBe(false);
  });
});
