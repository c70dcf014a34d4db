--[[
  The service gives an auto-enrolling student's place up (API.md v4): decides, in one step,
  whether this give-up is the first (it took the settings: it keeps the refusal for the student
  and mails them) and whether the place is one the service gave up (what is left of it — a
  ticket an enroll in flight got back after the first give-up's leave found none — goes too).
  Settings whose place is gone (a ticket that lapsed, a closed lecture) are no place to give up:
  they go, without a refusal or a mail.

  KEYS[1] auto      hash: student -> auto-enroll settings, '<student>!' -> the last refusal
  KEYS[2] queue     sorted set: the waiting students
  KEYS[3] ticket    this student's ticket key
  KEYS[4] inflight  sorted set: tickets consumed by an enroll not yet recorded
  KEYS[5] wpre      hash: the students in a registration window's pre-queue
  KEYS[6] draw      the lecture's draw marker: until it is there, the student may be in the
                    lecture's own pre-queue (whose members this script cannot name)
  KEYS[7] gone      leave-10's runs of numbers that left the queue other than from its head
  KEYS[8] waitlisted  set of the students queued by a join that found no seat left

  A student given up while in the queue leaves it here, in the step that takes their settings:
  an admission between the two would find them queued without settings and grant them a ticket
  as a student who enrolls by hand — one the leave that follows gives back unused.

  ARGV[1] student id
  ARGV[2] the refusal (JSON)

  Output: 1 the first give-up of the place (the refusal is kept now); 2 given up already (the
          refusal is there, the settings gone); 0 nothing to give up: the settings went another
          way (the student turned auto-enroll off, or left: the place, if any, is their own), or
          their place is gone
]]
local rcall = redis.call

--- @include "leave-queue"

local student = ARGV[1]
local refusalField = student .. '!'
if rcall('HEXISTS', KEYS[1], student) == 1 then
  local placed = rcall('ZSCORE', KEYS[2], student) or rcall('EXISTS', KEYS[3]) == 1
    or rcall('ZSCORE', KEYS[4], student) or rcall('HEXISTS', KEYS[5], student) == 1
    or rcall('EXISTS', KEYS[6]) == 0
  rcall('HDEL', KEYS[1], student)
  if not placed then return 0 end
  local seq = rcall('ZSCORE', KEYS[2], student)
  if seq then leaveQueue(2, 7, 8, student, seq) end
  rcall('HSET', KEYS[1], refusalField, ARGV[2])
  return 1
end
if rcall('HEXISTS', KEYS[1], refusalField) == 1 then return 2 end
return 0
