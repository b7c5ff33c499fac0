--[[
facts.lua: replace fact placeholders with measured values.

In the prose, [some.fact.name]{.fact} names a fact.  The values come from
pandoc metadata, usually loaded with --metadata-file build/facts.yaml:

  facts_schema: { name: "description", ... }   -- every legal name
  facts: { name: { text: "16424", from: "evidence/x.txt", stale: "no" } }

* a name missing from facts_schema stops the build (error, non-zero exit);
* a name in the schema without a value renders "not yet measured" (class
  fact-missing) and is reported on stderr;
* stale: yes renders the value with a visible "stale" marker (fact-stale).

If the metadata holds facts_unchecked (the fallback file written while no
facts generator exists), unknown names are only warned about.
]]

local schema, facts, unchecked = {}, {}, false
local warned = {}

local function str(v)
  -- Plain text of a metadata value (string, inlines, bool or nil).
  if v == nil then return nil end
  if type(v) == "boolean" then return v and "yes" or "no" end
  return pandoc.utils.stringify(v)
end

local function warn(msg)
  -- Print one warning line per distinct message to stderr.
  if not warned[msg] then
    warned[msg] = true
    io.stderr:write("facts.lua: warning: " .. msg .. "\n")
  end
end

local function read_meta(meta)
  -- Remember the schema and the values from the document metadata.
  if meta.facts_schema then
    for k, _ in pairs(meta.facts_schema) do schema[k] = true end
  end
  if meta.facts then
    for k, v in pairs(meta.facts) do facts[k] = v end
  end
  unchecked = meta.facts_unchecked ~= nil
end

local block_tags = { Para = true, Plain = true, Table = true, BulletList = true,
  OrderedList = true, Div = true, CodeBlock = true, Header = true,
  BlockQuote = true, HorizontalRule = true, LineBlock = true,
  DefinitionList = true, RawBlock = true }

local function is_blocks(t)
  -- True when a metadata value is a list of blocks (MetaBlocks).
  return type(t) == "table" and t[1] ~= nil and type(t[1]) ~= "string"
         and block_tags[t[1].t] == true
end

local function value_inlines(v)
  -- The inlines that show a fact's text, keeping Markdown formatting.
  local t = v.text
  if t == nil then return nil end
  if is_blocks(t) then
    -- several blocks where only inlines fit: keep the text, drop the layout
    return { pandoc.Str(pandoc.utils.stringify(t)) }
  end
  if type(t) == "table" and t[1] ~= nil and t[1].t ~= nil then return t end
  local s = str(t)
  if s == nil or s == "" then return nil end
  return { pandoc.Str(s) }
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
  if not schema[name] then
    if not unchecked then
      error("facts.lua: unknown fact name '" .. name ..
            "' (not in facts_schema of the facts file)", 0)
    end
    warn("facts are not checked against a schema: the facts file is " ..
         "the fallback written while no facts generator exists")
  end
  local v = facts[name]
  local shown = v and value_inlines(v)
  local attrs = { ["data-fact"] = name }
  if not shown then
    warn("fact '" .. name .. "' has no value: renders 'not yet measured'")
    return pandoc.Span({ pandoc.Str("not"), pandoc.Space(), pandoc.Str("yet"),
                         pandoc.Space(), pandoc.Str("measured") },
                       pandoc.Attr("", { "fact", "fact-missing" }, sorted_attrs(attrs)))
  end
  local from = str(v.from)
  if from and from ~= "" then attrs.title = "from " .. from end
  local classes = { "fact" }
  local content = {}
  for _, x in ipairs(shown) do table.insert(content, x) end
  if (str(v.stale) or "no"):lower() == "yes" then
    table.insert(classes, "fact-stale")
    attrs.title = (attrs.title and attrs.title .. "; " or "") ..
                  "stale: its evidence is older than the source"
    table.insert(content, pandoc.Space())
    table.insert(content, pandoc.Span({ pandoc.Str("(stale)") },
                               pandoc.Attr("", { "stale-mark" })))
  end
  return pandoc.Span(content, pandoc.Attr("", classes, sorted_attrs(attrs)))
end

local function block_fact(para)
  -- A paragraph that is only a fact span, whose value is several blocks
  -- (a table, paragraphs), becomes those blocks inside a div.fact.
  if #para.content ~= 1 or para.content[1].t ~= "Span" then return nil end
  local span = para.content[1]
  if not span.classes:includes("fact") then return nil end
  local name = pandoc.utils.stringify(span.content)
  local v = facts[name]
  if not (schema[name] or unchecked) or v == nil or not is_blocks(v.text) then
    return nil
  end
  local attrs = { ["data-fact"] = name }
  local from = str(v.from)
  if from and from ~= "" then attrs.title = "from " .. from end
  local classes = { "fact" }
  local blocks = {}
  for _, b in ipairs(v.text) do table.insert(blocks, b) end
  if (str(v.stale) or "no"):lower() == "yes" then
    table.insert(classes, "fact-stale")
    table.insert(blocks, pandoc.Para({ pandoc.Span({ pandoc.Str("(stale)") },
                                            pandoc.Attr("", { "stale-mark" })) }))
  end
  return pandoc.Div(blocks, pandoc.Attr("", classes, sorted_attrs(attrs)))
end

return {
  { Meta = read_meta },
  { Para = block_fact },
  { Span = fact },
}
