// Parse a GIFT file with the npm package gift-pegjs and print the questions as JSON.
// Usage: NODE_PATH=<dir>/node_modules node tests/gift_parse.js FILE
"use strict";
const fs = require("fs");
const gift = require("gift-pegjs");
const parse = typeof gift === "function" ? gift : gift.parse;
const text = fs.readFileSync(process.argv[2], "utf8");
try {
  process.stdout.write(JSON.stringify(parse(text)));
} catch (err) {
  const where = err.location ? ` at line ${err.location.start.line}` : "";
  process.stderr.write(`gift-pegjs: ${err.message}${where}\n`);
  process.exit(1);
}
