--[[
facts.lua: measured values in the page, from pandoc metadata.

The metadata (--metadata-file build/facts.json, written by gather.py):
  facts_schema: { name: "description", ... }   -- every legal name
  facts: { name: { text: "0.945", from: "evidence/x.txt", stale: false } }

In the prose, [some.fact.name]{.fact} shows a fact's text:
* a name missing from facts_schema stops the build (error, non-zero exit);
* a name in the schema without a value renders "not yet measured" (class
  fact-missing) and is reported on stderr;
* a stale value (its evidence is older than the source) gets a visible
  "(stale)" marker (class fact-stale).

::: {.when fact="name" is="a|b"} ... ::: keeps its content only when the
fact's text is one of the values between the bars (a fact without a value
matches none), so a sentence can depend on a verdict or on where the
numbers come from while every word of it stays in the source.
]]

local schema, facts = {}, {}
local warned = {}

local function warn(msg)
  -- Print one warning line per distinct message to stderr.
  if not warned[msg] then
    warned[msg] = true
    io.stderr:write("facts.lua: warning: " .. msg .. "\n")
  end
end

local function read_meta(meta)
  -- Remember the schema and the values from the document metadata.
  for k, _ in pairs(meta.facts_schema or {}) do schema[k] = true end
  for k, v in pairs(meta.facts or {}) do facts[k] = v end
end

local function known(name)
  -- Fail the build on a name the schema lacks.
  if not schema[name] then
    error("facts.lua: unknown fact name '" .. name ..
          "' (not in facts_schema of the facts file)", 0)
  end
end

local function text_of(name)
  -- The text a fact shows, or nil when it has no value.
  local v = facts[name]
  local s = v and v.text and pandoc.utils.stringify(v.text)
  if s == nil or s == "" then return nil end
  return s
end

local function inlines_of(name)
  -- The inlines that show a fact: its text, with any Markdown it holds.
  local t = facts[name].text
  if type(t) == "table" and t[1] ~= nil and t[1].t ~= nil then
    return pandoc.List(t)
  end
  return pandoc.List({ pandoc.Str(text_of(name)) })
end

-- Attributes as a list of pairs in sorted order: a Lua table's pairs() order
-- differs from run to run, and the page must be byte-for-byte reproducible.
local function sorted_attrs(t)
  local keys, out = {}, {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = { k, t[k] } end
  return out
end

local function fact(span)
  -- Replace one .fact span by its value, or fail on an unknown name.
  if not span.classes:includes("fact") then return nil end
  local name = pandoc.utils.stringify(span.content)
  known(name)
  local text, attrs = text_of(name), { ["data-fact"] = name }
  if not text then
    warn("fact '" .. name .. "' has no value: renders 'not yet measured'")
    return pandoc.Span({ pandoc.Str("not"), pandoc.Space(), pandoc.Str("yet"),
                         pandoc.Space(), pandoc.Str("measured") },
      pandoc.Attr("", { "fact", "fact-missing" }, sorted_attrs(attrs)))
  end
  local v = facts[name]
  local from = v.from and pandoc.utils.stringify(v.from) or ""
  if from ~= "" then attrs.title = "from " .. from end
  local classes, content = { "fact" }, inlines_of(name)
  if v.stale == true then
    table.insert(classes, "fact-stale")
    attrs.title = (attrs.title and attrs.title .. "; " or "") ..
                  "stale: its evidence is older than the source"
    content:insert(pandoc.Space())
    content:insert(pandoc.Span({ pandoc.Str("(stale)") },
                               pandoc.Attr("", { "stale-mark" })))
  end
  return pandoc.Span(content, pandoc.Attr("", classes, sorted_attrs(attrs)))
end

local function when(div)
  -- Keep a .when div's content only if its fact's text is listed in is=.
  if not div.classes:includes("when") then return nil end
  local name, want = div.attributes.fact, div.attributes.is
  if not name or not want then
    error("facts.lua: a .when div needs fact=\"NAME\" and is=\"VALUE\"", 0)
  end
  known(name)
  local text = text_of(name)
  for value in (want .. "|"):gmatch("([^|]*)|") do
    if text == value then return div.content end
  end
  return {}
end

return {
  { Meta = read_meta },
  { Div = when },
  { Span = fact },
}
