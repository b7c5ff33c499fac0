--[[
facts.lua: measured values in the page, from pandoc metadata
(--metadata-file build/facts.json, written by gather.py):
  facts_schema: { name: "description", ... }   -- every legal name
  facts: { name: { text: "0.945", from: "evidence/x.txt", stale: false } }

[some.fact.name]{.fact} shows a fact's text. A name missing from
facts_schema stops the build; one without a value renders "not yet
measured" (class fact-missing) with a warning on stderr; a stale value
(evidence older than the source) gets a "(stale)" mark (class fact-stale).

::: {.when fact="name" is="a|b"} ... ::: keeps its content only when the
fact's text is one of the values between the bars (a fact without a value
matches none): a sentence may depend on a verdict or on where the numbers
come from while every word of it stays in the source.
]]

local schema, facts, warned = {}, {}, {}

local function read_meta(meta)
  -- Remember the schema and the values from the document metadata.
  for k, _ in pairs(meta.facts_schema or {}) do schema[k] = true end
  for k, v in pairs(meta.facts or {}) do facts[k] = v end
end

local function text_of(name)
  -- A known fact's text, or nil when it has no value; unknown: an error.
  if not schema[name] then
    error("facts.lua: unknown fact name '" .. name ..
          "' (not in facts_schema of the facts file)", 0)
  end
  local s = facts[name] and pandoc.utils.stringify(facts[name].text or "")
  return s ~= "" and s or nil
end

local function fact(span)
  -- Replace one .fact span by its value (with any Markdown it holds).
  if not span.classes:includes("fact") then return nil end
  local name = pandoc.utils.stringify(span.content)
  local text, classes = text_of(name), { "fact" }
  if not text then
    if not warned[name] then
      warned[name] = true
      io.stderr:write("facts.lua: warning: fact '" .. name ..
                      "' has no value: renders 'not yet measured'\n")
    end
    return pandoc.Span(pandoc.read("not yet measured").blocks[1].content,
      pandoc.Attr("", { "fact", "fact-missing" }, { { "data-fact", name } }))
  end
  local v = facts[name]
  local content = pandoc.List({ pandoc.Str(text) })
  if type(v.text) == "table" and v.text[1] ~= nil and v.text[1].t then
    content = pandoc.List({}) .. v.text  -- a copy: the fact is shared
  end
  local from = v.from and pandoc.utils.stringify(v.from) or ""
  local title = from ~= "" and "from " .. from or nil
  if v.stale == true then
    table.insert(classes, "fact-stale")
    title = (title and title .. "; " or "") ..
            "stale: its evidence is older than the source"
    content:extend({ pandoc.Space(), pandoc.Span({ pandoc.Str("(stale)") },
      pandoc.Attr("", { "stale-mark" })) })
  end
  -- Attributes as a list, in a fixed order: the page is reproducible.
  return pandoc.Span(content, pandoc.Attr("", classes,
    { { "data-fact", name }, title and { "title", title } or nil }))
end

local function when(div)
  -- Keep a .when div's content only if its fact's text is listed in is=.
  if not div.classes:includes("when") then return nil end
  local name, want = div.attributes.fact, div.attributes.is
  if not name or not want then
    error("facts.lua: a .when div needs fact=\"NAME\" and is=\"VALUE\"", 0)
  end
  local text = text_of(name)
  for value in (want .. "|"):gmatch("([^|]*)|") do
    if text == value then return div.content end
  end
  return {}
end

return { { Meta = read_meta }, { Div = when }, { Span = fact } }
