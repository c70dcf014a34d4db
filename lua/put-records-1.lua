--[[
  Records students' records of one term in the term's hash, each only where it is newer than the
  copy already there: writers (a record's PUT or DELETE, an import, a rebuild from PostgreSQL)
  may arrive in any order, and the highest record version wins.

  KEYS[1] records  hash: student -> '<version> <year or -> <majors or -> <groups or ->' (lists
                   joined by commas; a version with no record: '<version> - - -'); the field
                   '~' is present once the whole term was loaded (a join that finds it missing
                   rebuilds the term from PostgreSQL first), and holds the highest version
                   written since (behind PostgreSQL's, the copy lost writes: rebuilt)

  ARGV[1] '1' to mark the term loaded after writing, '0' not
  ARGV[2 ..] student, value, student, value, ...

  Output: the number of students written
]]
local rcall = redis.call
local written, highest = 0, 0
for i = 2, #ARGV, 2 do
  local student, value = ARGV[i], ARGV[i + 1]
  local current = rcall('HGET', KEYS[1], student)
  local have = current and tonumber(string.match(current, '^(%d+)')) or -1
  local version = tonumber(string.match(value, '^(%d+)'))
  if version > have then
    rcall('HSET', KEYS[1], student, value)
    written = written + 1
  end
  if version > highest then highest = version end
end
local loaded = rcall('HGET', KEYS[1], '~')
if loaded or ARGV[1] == '1' then
  rcall('HSET', KEYS[1], '~', math.max(highest, tonumber(loaded or '0')))
end
return written
