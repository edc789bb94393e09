/**
 * The built-in Unicode emoji set: the common emoji, named the way the reference names them
 * (its own names, not Unicode's: `smile` is U+1F642, `holiday_tree` U+1F384). One entry per
 * line: the emoji code (lower-case hex codepoints joined by `-`, as reactions carry it), then
 * the canonical name, then aliases. The renderer (`:name:` and Unicode emoji) and reactions
 * (name ↔ code validation) both read this table through src/lib/emoji/index.ts.
 */
export const EMOJI_TABLE = `
1f600 grinning happy
1f603 smiley
1f604 big_smile
1f601 grinning_face_with_smiling_eyes
1f606 laughing lol
1f605 sweat_smile
1f602 joy tears laughter_tears
1f923 rolling_on_the_floor_laughing rofl
263a relaxed
1f60a blush
1f607 innocent halo
1f642 smile slight_smile
1f643 upside_down oops
1f609 wink
1f60c relieved
1f60d heart_eyes in_love
1f618 heart_kiss blow_a_kiss
1f617 kiss
1f619 kiss_smiling_eyes
1f61a kiss_with_blush
1f60b yum
1f61c stuck_out_tongue_wink joking crazy
1f61d stuck_out_tongue
1f61b mischievous
1f911 money_face kaching
1f917 hug arms_open
1f913 nerd geek
1f60e sunglasses
1f921 clown
1f920 cowboy
1f60f smirk smug
1f612 unamused
1f61e disappointed
1f614 pensive tired
1f61f worried
1f615 oh_no half_frown concerned confused
1f641 frown slight_frown
2639 sad big_frown
1f623 persevere helpless
1f616 confounded agony
1f62b anguish
1f629 weary distraught
1f624 triumph
1f620 angry
1f621 rage mad grumpy very_angry
1f636 speechless no_mouth blank poker_face
1f610 neutral
1f611 expressionless
1f62f hushed
1f626 frowning
1f627 anguished pained
1f62e open_mouth surprise
1f632 astonished
1f635 dizzy
1f633 flushed embarrassed blushing
1f631 scream
1f628 fear scared shock
1f630 cold_sweat
1f622 cry
1f625 exhausted disappointed_relieved stressed
1f924 drooling
1f62d sob
1f613 sweat
1f62a sleepy
1f634 sleeping
1f644 rolling_eyes
1f914 thinking
1f925 lying
1f62c grimacing nervous anxious
1f910 silence quiet hush zip_it lips_are_sealed
1f922 nauseated queasy
1f927 sneezing
1f637 cant_talk mask
1f912 sick flu face_with_thermometer
1f915 hurt head_bandage injured
1f970 smiling_face_with_hearts
1f973 partying_face
1f97a pleading_face
1f92f exploding_head mind_blown
1f92a zany_face
1f928 raised_eyebrow skeptical
1f92b shushing_face
1f92d hand_over_mouth
1f971 yawning_face
1f975 hot_face
1f976 cold_face
1f974 woozy_face
1f608 smiling_devil smiling_imp smiling_face_with_horns
1f47f devil imp angry_devil
1f479 ogre
1f47a goblin
1f4a9 poop pile_of_poo
1f47b ghost boo spooky haunted
1f480 skull
2620 skull_and_crossbones pirate death hazard toxic poison
1f47d alien ufo
1f47e space_invader
1f916 robot
1f383 jack-o-lantern pumpkin
1f63a smiley_cat
1f638 smile_cat
1f639 joy_cat
1f63b heart_eyes_cat
1f63c smirk_cat smug_cat
1f63d kissing_cat
1f640 scream_cat weary_cat
1f63f crying_cat
1f63e angry_cat pouting_cat
1f450 open_hands
1f64c raised_hands praise
1f44f clap applause
1f64f pray welcome thank_you namaste
1f91d handshake done_deal
1f44d +1 thumbs_up
1f44e -1 thumbs_down
1f44a fist_bump punch
270a fist power
1f91b left_fist
1f91c right_fist
1f91e fingers_crossed
270c peace_sign victory
1f918 rock_on sign_of_the_horns
1f44c ok got_it
1f448 point_left
1f449 point_right
1f446 point_up this
1f447 point_down
261d wait_one_second point_of_information asking_a_question
270b hand raised_hand
1f91a stop
1f590 high_five palm
1f596 spock live_long_and_prosper
1f44b wave hello hi
1f919 call_me
1f4aa muscle
1f595 middle_finger
270d writing
1f933 selfie
1f485 nail_polish nail_care
1f48d ring
1f484 lipstick
1f48b lipstick_kiss
1f444 lips mouth
1f445 tongue
1f442 ear
1f443 nose
1f463 footprints feet
1f441 eye
1f440 eyes looking
1f5e3 speaking_head
1f464 silhouette shadow
1f465 silhouettes shadows
1f476 baby
1f466 boy
1f467 girl
1f468 man
1f469 woman
1f474 older_man elderly_man
1f475 older_woman elderly_woman
1f46e police cop
1f477 construction_worker
1f482 guard
1f575 detective spy sleuth agent sneaky
1f385 santa
1f478 princess
1f934 prince
1f470 bride
1f935 tuxedo
1f47c angel
1f930 pregnant expecting
1f647 bow
1f481 information_desk_person person_tipping_hand
1f645 no_signal nope
1f646 ok_signal
1f64b raising_hand pick_me
1f926 face_palm
1f937 shrug
1f937-200d-2640 woman_shrugging
1f937-200d-2642 man_shrugging
1f926-200d-2640 woman_facepalming
1f926-200d-2642 man_facepalming
1f64e person_pouting
1f64d person_frowning
1f487 haircut
1f486 massage
1f574 levitating suit_levitating
1f483 dancer
1f57a dancing disco
1f46f dancers
1f6b6 walking pedestrian
1f3c3 running runner
1f46b man_and_woman_holding_hands
1f46c two_men_holding_hands
1f46d two_women_holding_hands
1f46a family
1f441-200d-1f5e8 eye_in_speech_bubble
1f45a clothing
1f455 shirt tshirt
1f456 jeans denim
1f454 tie
1f457 dress
1f459 bikini
1f458 kimono
1f460 high_heels
1f461 sandal flip_flops
1f462 boot
1f45e shoe
1f45f athletic_shoe sneaker running_shoe
1f452 hat
1f3a9 top_hat
1f393 graduate mortar_board
1f451 crown queen king
26d1 helmet
1f392 backpack satchel
1f45d pouch
1f45b purse
1f45c handbag
1f4bc briefcase
1f453 glasses
1f576 dark_sunglasses
1f302 closed_umbrella
2602 umbrella
1f436 puppy
1f431 kitten
1f42d dormouse
1f439 hamster
1f430 bunny
1f98a fox
1f43b bear
1f43c panda
1f428 koala
1f42f tiger_cub
1f981 lion
1f42e calf
1f437 piglet
1f43d pig_nose
1f438 frog
1f435 monkey_face
1f648 see_no_evil
1f649 hear_no_evil
1f64a speak_no_evil
1f412 monkey
1f414 chicken
1f427 penguin
1f426 bird
1f424 chick baby_chick
1f423 hatching hatching_chick
1f425 new_baby
1f986 duck
1f985 eagle
1f989 owl
1f987 bat
1f43a wolf
1f417 boar
1f434 pony
1f984 unicorn
1f41d bee buzz honeybee
1f41b bug caterpillar
1f98b butterfly
1f40c snail
1f41a shell seashell conch spiral_shell
1f41e beetle ladybug
1f41c ant
1f577 spider
1f578 web spider_web
1f422 turtle tortoise
1f40d snake hiss
1f98e lizard gecko
1f982 scorpion
1f980 crab
1f991 squid
1f419 octopus
1f990 shrimp
1f420 tropical_fish
1f41f fish
1f421 blowfish
1f42c dolphin flipper
1f988 shark
1f433 whale
1f40b humpback_whale
1f40a crocodile
1f406 leopard
1f405 tiger
1f403 water_buffalo
1f402 ox bull
1f404 cow
1f98c deer
1f42a arabian_camel
1f42b camel
1f418 elephant
1f98f rhinoceros
1f98d gorilla
1f40e horse
1f416 pig oink
1f410 goat
1f40f ram
1f411 sheep baa
1f415 dog woof
1f429 poodle
1f408 cat meow
1f413 rooster alarm cock-a-doodle-doo
1f983 turkey
1f54a dove dove_of_peace
1f407 rabbit
1f401 mouse
1f400 rat
1f43f chipmunk
1f43e paw_prints paws
1f409 dragon
1f432 dragon_face
1f335 cactus
1f384 holiday_tree
1f332 evergreen_tree
1f333 tree deciduous_tree
1f334 palm_tree
1f331 seedling sprout
1f33f herb plant
2618 shamrock clover
1f340 lucky four_leaf_clover
1f38d bamboo
1f38b wish_tree tanabata_tree
1f343 leaves wind fall
1f342 fallen_leaf
1f341 maple_leaf
1f344 mushroom
1f33e harvest ear_of_rice
1f490 bouquet
1f337 tulip flower
1f339 rose
1f940 wilted_flower crushed
1f33b sunflower
1f33c blossom
1f338 cherry_blossom
1f33a hibiscus
1f30e earth_americas
1f30d earth_africa
1f30f earth_asia
1f315 full_moon
1f311 new_moon
1f319 moon
1f31a new_moon_face
1f31d moon_face
1f31e sun_face
2b50 star
1f31f glowing_star
1f4ab dizzy_star
2728 sparkles glamour
2604 comet meteor
2600 sunny
1f324 mostly_sunny
26c5 partly_sunny partly_cloudy
1f325 barely_sunny mostly_cloudy
1f326 sun_and_rain
2601 cloudy
1f327 rainy soaked drenched
26c8 thunderstorm thunder_and_rain
1f329 lightning lightning_storm
1f328 snowy
2603 snowman
26c4 frosty
2744 snowflake
1f32c windy
1f4a8 dash
1f32a tornado
1f32b fog hazy
1f30a ocean
1f4a7 drop water_drop
1f4a6 sweat_drops
2614 umbrella_with_rain
1f34f green_apple
1f34e apple
1f350 pear
1f34a orange tangerine mandarin
1f34b lemon
1f34c banana
1f349 watermelon
1f347 grapes
1f353 strawberry
1f348 melon
1f352 cherries
1f351 peach
1f34d pineapple
1f95d kiwi
1f951 avocado
1f345 tomato
1f346 eggplant
1f952 cucumber
1f955 carrot
1f33d corn maize
1f336 hot_pepper chili_pepper
1f954 potato
1f360 yam sweet_potato
1f330 chestnut
1f95c peanuts
1f36f honey
1f950 croissant
1f35e bread
1f956 baguette
1f9c0 cheese
1f95a egg
1f373 cooking
1f953 bacon
1f95e pancakes breakfast
1f364 tempura
1f357 drumstick poultry
1f356 meat
1f355 pizza
1f32d hotdog
1f354 hamburger
1f35f fries
1f959 doner_kebab shawarma souvlaki stuffed_flatbread
1f32e taco
1f32f burrito
1f957 salad
1f958 paella
1f35d spaghetti
1f35c ramen noodles
1f372 food soup stew
1f365 naruto
1f363 sushi
1f371 bento
1f35b curry
1f359 rice_ball
1f35a rice
1f358 rice_cracker
1f362 oden
1f361 dango
1f367 shaved_ice
1f368 ice_cream
1f366 soft_serve
1f370 cake
1f382 birthday
1f36e custard flan
1f36d lollipop
1f36c candy
1f36b chocolate
1f37f popcorn
1f369 donut doughnut
1f36a cookie
1f95b milk glass_of_milk
1f37c baby_bottle
2615 coffee
1f375 tea
1f376 sake
1f37a beer
1f37b beers
1f942 clink cheers
1f377 wine
1f943 small_glass
1f378 cocktail
1f379 tropical_drink
1f37e champagne
1f944 spoon
1f374 fork_and_knife eating_utensils
1f37d hungry meal table_setting fork_and_knife_with_plate lets_eat
26bd soccer
1f3c0 basketball
1f3c8 football
26be baseball
1f3be tennis
1f3d0 volleyball
1f3c9 rugby
1f3b1 8_ball
1f3d3 ping_pong table_tennis
1f3f8 badminton
1f945 gooooooooal goal
1f3d2 ice_hockey
1f3d1 field_hockey
1f3cf cricket
26f3 hole_in_one
1f3f9 bow_and_arrow archery
1f3a3 fishing
1f94a boxing_glove
1f94b black_belt keikogi dogi martial_arts
26f8 ice_skate skate
1f3bf ski
26f7 skier
1f3c2 snowboarder
1f3cb lift weight_lifting
1f93a fencing
1f3c4 surf
1f3ca swim
1f6b4 bike cyclist
1f3c6 trophy champion
1f3c5 sports_medal
1f396 military_medal
1f947 gold number_one
1f948 silver
1f949 bronze
1f3ab ticket
1f39f admission_tickets
1f3aa circus
1f939 juggling
1f3ad performing_arts drama theater
1f3a8 art palette painting
1f3ac action
1f3a4 microphone mike mic
1f3a7 headphones
1f3bc musical_score
1f3b9 piano musical_keyboard
1f941 drum
1f3b7 saxophone
1f3ba trumpet
1f3b8 guitar
1f3bb violin
1f3b2 dice die
1f3af direct_hit darts target
1f3b3 strike bowling
1f3ae video_game
1f3b0 slot_machine
1f697 car
1f695 taxi
1f699 recreational_vehicle jeep
1f68c bus school_bus
1f68e trolley
1f3ce racecar
1f693 police_car
1f691 ambulance
1f692 fire_truck fire_engine
1f690 minibus
1f69a moving_truck
1f69b truck tractor-trailer big_rig semi_truck transport_truck
1f69c tractor
1f6f4 kick_scooter
1f6b2 bicycle
1f6f5 motor_scooter
1f3cd motorcycle
1f6a8 siren rotating_light alert
1f68d oncoming_bus
1f698 oncoming_automobile oncoming_car
1f6a0 gondola
1f69f suspension_railway
1f683 railway_car train_car
1f68b tram tram_car
1f69e mountain_railway
1f69d monorail elevated_train
1f684 high_speed_train
1f685 bullet_train
1f688 light_rail
1f682 train steam_locomotive
1f686 oncoming_train
1f687 subway
1f68a oncoming_tram
1f689 station
1f681 helicopter
1f6e9 small_airplane
2708 airplane
1f6eb take_off departure airplane_departure
1f6ec landing arrival airplane_arrival
1f680 rocket
1f6f0 satellite
1f4ba seat
1f6f6 canoe
26f5 boat sailboat
1f6e5 motor_boat
1f6a4 speedboat
1f6f3 passenger_ship
26f4 ferry
1f6a2 ship
2693 anchor
1f6a7 work_in_progress construction_zone
26fd fuel gas_pump petrol_pump
1f68f bus_stop
1f6a6 traffic_light vertical_traffic_light
1f6a5 horizontal_traffic_light
1f5fa map world_map road_trip
1f5ff rock_carving moyai
1f5fd statue statue_of_liberty
26f2 fountain
1f5fc tower tokyo_tower
1f3f0 castle
1f3ef shiro
1f3df stadium
1f3a1 ferris_wheel
1f3a2 roller_coaster
1f3a0 carousel merry_go_round
26f1 beach_umbrella
1f3d6 beach
1f3dd island
26f0 mountain
1f3d4 snowy_mountain
1f5fb mount_fuji
1f30b volcano
1f3dc desert
1f3d5 campsite
26fa tent
1f6e4 railway_track train_tracks
1f6e3 road motorway
1f3d7 construction
1f3ed factory
1f3e0 house
1f3e1 suburb
1f3d8 houses
1f3da derelict_house condemned
1f3e2 office
1f3ec department_store
1f3e3 japan_post
1f3e4 post_office
1f3e5 hospital
1f3e6 bank
1f3e8 hotel
1f3ea convenience_store
1f3eb school
1f3e9 love_hotel
1f492 wedding
1f3db classical_building
26ea church
1f54c mosque
1f54d synagogue
1f54b kaaba
26e9 shinto_shrine
1f5fe japan
1f391 moon_ceremony
1f3de national_park
1f305 sunrise
1f304 mountain_sunrise
1f320 shooting_star wish
1f387 sparkler
1f386 fireworks
1f307 city_sunrise
1f306 sunset
1f3d9 city
1f303 night
1f30c milky_way night_sky
1f309 bridge
1f301 foggy
231a watch
1f4f1 mobile_phone smartphone iphone android
1f4f2 calling
1f4bb computer laptop
2328 keyboard
1f5a5 desktop_computer pc
1f5a8 printer
1f5b1 computer_mouse
1f5b2 trackball
1f579 joystick arcade
1f5dc compression vise
1f4bd gold_record minidisc
1f4be floppy_disk
1f4bf cd
1f4c0 dvd
1f4fc vhs videocassette
1f4f7 camera
1f4f8 taking_a_picture say_cheese
1f4f9 video_camera video_recorder
1f3a5 movie_camera
1f4fd projector movie
1f39e film
1f4de landline home_phone
260e phone telephone
1f4df pager
1f4e0 fax
1f4fa tv television
1f4fb radio
1f399 studio_microphone
1f39a volume level_slider
1f39b control_knobs
23f1 stopwatch
23f2 timer
23f0 alarm_clock
1f570 mantelpiece_clock
231b times_up hourglass_done
23f3 time_ticking hourglass
1f4e1 satellite_antenna
1f50b battery full_battery
1f50c electric_plug
1f4a1 light_bulb bulb idea
1f526 flashlight
1f56f candle
1f5d1 wastebasket trash_can
1f6e2 oil_drum commodities
1f4b8 losing_money easy_come_easy_go money_with_wings
1f4b5 dollar_bills
1f4b4 yen_banknotes
1f4b6 euro_banknotes
1f4b7 pound_notes
1f4b0 money
1f4b3 credit_card debit_card
1f48e gem crystal
2696 justice scales balance
1f527 fixing wrench
1f528 hammer maintenance handyman handywoman
2692 at_work hammer_and_pick
1f6e0 working_on_it hammer_and_wrench tools
26cf mine pick
1f529 nut_and_bolt screw
2699 gear settings mechanical engineer
26d3 chains
1f52b gun
1f4a3 bomb
1f52a knife hocho betrayed
1f5e1 dagger rated_for_violence
2694 duel swords
1f6e1 shield
1f6ac smoking
26b0 coffin burial grave
26b1 funeral_urn cremation
1f3fa vase amphora
1f52e crystal_ball oracle future fortune_telling
1f4ff prayer_beads
1f488 barber striped_pole
2697 alchemy
1f52d telescope
1f52c science microscope
1f573 hole
1f48a medicine pill
1f489 injection syringe
1f321 temperature thermometer warm
1f6bd toilet
1f6b0 potable_water tap_water drinking_water
1f6bf shower
1f6c1 bathtub
1f6c0 bath
1f6ce bellhop_bell reception services ding
1f511 key
1f5dd secret clue old_key
1f6aa door
1f6cb living_room furniture couch_and_lamp lifestyles
1f6cf bed bedroom
1f6cc in_bed accommodations guestrooms
1f5bc picture framed_picture
1f6cd shopping_bags
1f6d2 shopping_cart shopping_trolley
1f381 gift present
1f388 balloon celebration
1f38f carp_streamer flags
1f380 ribbon decoration
1f38a confetti party_ball
1f389 tada
1f38e dolls
1f3ee lantern izakaya_lantern
1f390 wind_chime
2709 email envelope mail
1f4e9 mail_sent sent
1f4e8 mail_received
1f4e7 e-mail
1f48c love_letter
1f4e5 inbox
1f4e4 outbox
1f4e6 package
1f3f7 label tag price_tag
1f4ea closed_mailbox
1f4eb mailbox
1f4ec unread_mail
1f4ed inbox_zero empty_mailbox no_mail
1f4ee mail_dropoff
1f4ef horn
1f4dc scroll
1f4c3 receipt
1f4c4 document paper file page
1f4d1 place_holder
1f4ca bar_chart
1f4c8 chart stock_market
1f4c9 downwards_trend shrinking
1f5d2 spiral_notepad
1f5d3 date calendar
1f4c6 rip_calendar
1f4c5 calendar_page
1f4c7 rolodex card_index
1f5c3 archive
1f5f3 ballot_box
1f5c4 file_cabinet
1f4cb clipboard
1f4c1 organize file_folder
1f4c2 folder
1f5c2 sort
1f5de newspaper swat
1f4f0 headlines
1f4d3 notebook composition_book
1f4d4 decorative_notebook
1f4d2 ledger spiral_notebook
1f4d5 red_book closed_book
1f4d7 green_book
1f4d8 blue_book
1f4d9 orange_book
1f4da books
1f4d6 book open_book
1f516 bookmark
1f517 link
1f4ce paperclip attachment
1f587 office_supplies paperclip_chain linked
1f4d0 carpenter_square triangular_ruler
1f4cf ruler straightedge
1f4cc push_pin thumb_tack
1f4cd pin sewing_pin
2702 scissors
1f58a pen ballpoint_pen
1f58b fountain_pen
2712 paper_pen
1f58c paintbrush
1f58d crayon
1f4dd memo note
270f pencil
1f50d search find magnifying_glass
1f50e mag_right
1f50f privacy key_signing digital_security protected
1f510 secure lock_with_key safe commitment loyalty
1f512 locked
1f513 unlocked
2764 heart love love_you
1f49b yellow_heart heart_of_gold
1f49a green_heart envy
1f499 blue_heart
1f49c purple_heart bravery
1f5a4 black_heart
1f494 broken_heart heartache
2763 heart_exclamation
1f495 two_hearts
1f49e revolving_hearts
1f493 heartbeat
1f497 heart_pulse growing_heart
1f496 sparkling_heart
1f498 cupid smitten heart_arrow
1f49d gift_heart
1f49f heart_box
262e peace
271d cross christianity
262a star_and_crescent islam
1f549 om hinduism
2638 wheel_of_dharma buddhism
2721 star_of_david judaism
1f52f menorah_with_nine_branches
262f yin_yang
2626 orthodox_cross
1f6d0 place_of_worship
26ce ophiuchus
2648 aries
2649 taurus
264a gemini
264b cancer
264c leo
264d virgo
264e libra
264f scorpius
2650 sagittarius
2651 capricorn
2652 aquarius
2653 pisces
1f194 id
269b atom physics
1f4f4 phone_off
1f4f3 vibration_mode
274c cross_mark incorrect wrong
2b55 circle
1f6d1 octagonal_sign
26d4 no_entry wrong_way
1f4db name_badge
1f6ab prohibited not_allowed
1f4af 100 hundred
1f4a2 anger bam pow
2668 hot_springs
1f6b7 no_pedestrians
1f6af do_not_litter
1f6b3 no_bicycles
1f6b1 non-potable_water
1f51e underage nc17
1f4f5 no_phones
1f6ad no_smoking
2757 exclamation
2755 grey_exclamation
2753 question
2754 grey_question
203c bangbang double_exclamation
2049 interrobang
1f505 low_brightness dim
1f506 brightness high_brightness
303d part_alternation
26a0 warning caution danger
1f6b8 children_crossing school_crossing drive_with_care
1f531 beginner
267b recycle
2705 check
2611 checkbox check_box_with_check
2714 check_mark
2716 heavy_multiplication multiplication multiply
2795 plus add
2796 minus subtract
2797 division divide
27b0 curly_loop loop
27bf double_loop voicemail
2733 eight_spoked_asterisk
2734 eight_pointed_star
2747 sparkle
1f4a0 diamond_with_a_dot cute
24c2 metro m
1f300 cyclone hurricane typhoon
1f4a4 zzz
1f3e7 atm
1f6be wc water_closet
267f accessible wheelchair disabled
1f17f parking p
1f6b9 mens
1f6ba womens
1f6bc baby_change nursery
1f6bb restroom
1f6ae put_litter_in_its_place
1f3a6 cinema movie_theater
1f4f6 cell_reception signal_strength signal_bars
1f201 here ko
1f523 symbols
2139 info
1f524 abc
1f521 abcd alphabet
1f520 capital_abcd capital_letters
1f196 ng
1f197 squared_ok
1f199 squared_up
1f192 cool
1f195 new
1f193 free
0030-20e3 zero
0031-20e3 one
0032-20e3 two
0033-20e3 three
0034-20e3 four
0035-20e3 five
0036-20e3 six
0037-20e3 seven
0038-20e3 eight
0039-20e3 nine
1f51f ten
1f522 1234 numbers
0023-20e3 hash
002a-20e3 asterisk
25b6 play
23f8 pause
23ef play_pause
23f9 stop_button
23fa record
23ed next_track skip_forward
23ee previous_track skip_back
23e9 fast_forward
23ea rewind
23eb double_up fast_up
23ec double_down fast_down
25c0 play_reverse
1f53c upvote up_button increase
1f53d downvote down_button decrease
27a1 right east
2b05 left west
2b06 up north
2b07 down south
2197 upper_right north_east
2198 lower_right south_east
2199 lower_left south_west
2196 upper_left north_west
2195 up_down
2194 left_right swap
21aa forward right_hook
21a9 reply left_hook
2934 heading_up
2935 heading_down
1f500 shuffle
1f501 repeat
1f502 repeat_one
1f504 counterclockwise return
1f503 clockwise
1f3b5 music
1f3b6 musical_notes
1f4b2 dollars
1f4b1 exchange
2122 tm trademark
00a9 copyright
00ae registered
3030 wavy_dash
1f51a end
1f519 back
1f51b on
1f51d top
1f51c soon
1f518 radio_button
26aa white_circle
26ab black_circle
1f534 red_circle
1f535 blue_circle
1f53a red_triangle_up
1f53b red_triangle_down
1f538 small_orange_diamond
1f539 small_blue_diamond
1f536 large_orange_diamond
1f537 large_blue_diamond
1f533 black_and_white_square
1f532 white_and_black_square
25aa black_small_square
25ab white_small_square
25fe black_medium_small_square
25fd white_medium_small_square
25fc black_medium_square
25fb white_medium_square
2b1b black_large_square
2b1c white_large_square
1f508 speaker
1f507 mute no_sound
1f509 softer
1f50a louder sound
1f514 notifications bell
1f515 mute_notifications
1f4e3 megaphone shout
1f4e2 loudspeaker bullhorn
1f4ac speech_bubble
1f5e8 speech
1f4ad thought thought_bubble
1f5ef anger_bubble
2660 spades
2663 clubs
2665 hearts
2666 diamonds
1f0cf joker
1f3b4 playing_cards
1f004 mahjong
1f550 time clock
1f3f3 white_flag surrender
1f3f4 black_flag
1f3c1 checkered_flag race finish start
1f6a9 triangular_flag
1f3f3-200d-1f308 rainbow_flag pride
1f308 rainbow
1f525 fire lit hot flame
1f4a5 boom explosion crash collision
1f3c3-200d-2640 woman_running
1f6a3 rowboat
1f9e1 orange_heart
1f9d0 monocle
1f9e0 brain
1f9c1 cupcake
1f9cb bubble_tea
1f9ea test_tube
1f9ec dna
1f9f9 broom
1f9fb roll_of_paper toilet_paper
1f9fc soap
1f9fe receipt_paper
1f9ff nazar_amulet
1f9ed compass
1f9f1 bricks
1f9f2 magnet
1f9f3 luggage
1f9f8 teddy_bear
1f9e9 jigsaw puzzle
1fa90 ringed_planet
`;
